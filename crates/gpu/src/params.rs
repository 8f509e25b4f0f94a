//! Kernel parameters at dynamic uniform offsets: one buffer holds a parameter block per
//! dispatch, so that every dispatch of a submission shares one bind group and picks its block
//! by offset.

use std::marker::PhantomData;

use bytemuck::Pod;

use super::{Gpu, GpuError, layout_entry};

/// Blocks of parameters `T`, `slots` of them, each at a multiple of the device's uniform
/// offset alignment.
pub struct ParamSlots<T> {
    buffer: wgpu::Buffer,
    stride: u32,
    slots: u32,
    _params: PhantomData<T>,
}

impl<T: Pod> ParamSlots<T> {
    /// Room for `slots` blocks, written later with [`ParamSlots::write`].
    pub fn new(gpu: &Gpu, label: &str, slots: u32) -> Result<ParamSlots<T>, GpuError> {
        let stride = Self::stride(gpu);
        let buffer = gpu.buffer(
            label,
            u64::from(stride) * u64::from(slots.max(1)),
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        )?;
        Ok(ParamSlots {
            buffer,
            stride,
            slots: slots.max(1),
            _params: PhantomData,
        })
    }

    /// The blocks `params`, uploaded once.
    pub fn with(gpu: &Gpu, label: &str, params: &[T]) -> Result<ParamSlots<T>, GpuError> {
        let slots = ParamSlots::new(gpu, label, params.len() as u32)?;
        slots.write(gpu, params);
        Ok(slots)
    }

    /// The block size rounded up to the alignment: a dynamic offset must be a multiple of it.
    fn stride(gpu: &Gpu) -> u32 {
        let align = gpu.limits.min_uniform_buffer_offset_alignment;
        (size_of::<T>() as u32).div_ceil(align) * align
    }

    /// Writes `params` into the first slots (queued: it lands before the next submission).
    pub fn write(&self, gpu: &Gpu, params: &[T]) {
        assert!(
            params.len() <= self.slots as usize,
            "{} parameter blocks for {} slots",
            params.len(),
            self.slots
        );
        let stride = self.stride as usize;
        let mut bytes = vec![0u8; stride * params.len()];
        for (block, p) in bytes.chunks_exact_mut(stride).zip(params) {
            block[..size_of::<T>()].copy_from_slice(bytemuck::bytes_of(p));
        }
        gpu.queue.write_buffer(&self.buffer, 0, &bytes);
    }

    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// The dynamic offset of slot `k`, for `set_bind_group`.
    pub fn offset(&self, k: u32) -> u32 {
        debug_assert!(k < self.slots);
        k * self.stride
    }

    /// The bind group entry: one block, moved by the dynamic offset.
    pub fn entry(&self, binding: u32) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &self.buffer,
                offset: 0,
                size: wgpu::BufferSize::new(size_of::<T>() as u64),
            }),
        }
    }

    /// The bind group layout entry that [`ParamSlots::entry`] fills.
    pub fn layout(binding: u32) -> wgpu::BindGroupLayoutEntry {
        layout_entry(binding, wgpu::BufferBindingType::Uniform, true)
    }
}
