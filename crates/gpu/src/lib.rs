//! The GPU runtime shared by every kernel: adapter choice, the one device per process, shader
//! composition, error capture, and buffer helpers. It knows no game: each game crate holds its
//! kernels and their host code beside their CPU twins.

pub mod kernel;
pub mod params;

pub use kernel::Kernel;
pub use params::ParamSlots;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;

/// Where a command computes. `auto` takes a real GPU (discrete, integrated or virtual) when
/// there is one and CPU threads otherwise; `gpu` takes any adapter, software ones included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    #[default]
    Auto,
    Cpu,
    Gpu,
}

/// Errors of the GPU runtime, each a sentence a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("{}", no_adapter_message())]
    NoAdapter,
    /// A wgpu environment variable whose value wgpu would skip with only a log line, leaving
    /// the search empty (or narrower than asked) and the user told to install drivers.
    #[error("{var}={value:?}: {why}")]
    Setting {
        var: &'static str,
        value: String,
        why: String,
    },
    #[error("no GPU adapter matches WGPU_ADAPTER_NAME={0:?}; `rollsim devices` lists them")]
    NoAdapterNamed(String),
    #[error("could not open the GPU device {adapter}: {reason}")]
    RequestDevice { adapter: String, reason: String },
    #[error("GPU device lost: {0}")]
    Lost(String),
    #[error("GPU out of memory while {0}")]
    OutOfMemory(String),
    #[error("GPU error while {0}: {1}")]
    Validation(String, String),
    #[error("not possible on this GPU: {0}")]
    Unsupported(String),
    #[error("GPU results incomplete: {0}")]
    Incomplete(String),
    #[error("GPU did not finish within {0:?} (hung or far too slow); giving up")]
    Timeout(Duration),
}

impl GpuError {
    /// Whether the error is the user's setting rather than the machine's failing: an
    /// environment variable naming no backend, or no adapter that is there.
    pub fn is_bad_setting(&self) -> bool {
        matches!(self, GpuError::Setting { .. } | GpuError::NoAdapterNamed(_))
    }
}

/// The names `WGPU_BACKEND` takes, as wgpu-types 30 reads them (`Backends::from_comma_list`,
/// case-insensitive), each backend's names together.
const BACKEND_NAMES: &[&[&str]] = &[
    &["vulkan", "vk"],
    &["gl", "gles", "opengl"],
    &["metal", "mtl"],
    &["dx12", "d3d12"],
    &["webgpu"],
    &["noop"],
];

/// Checks `WGPU_BACKEND`: a comma-separated list of backend names. wgpu itself drops an
/// unknown name with a log line nobody sees, so `garbage` searched no backend at all.
fn check_backend_setting(value: Option<std::ffi::OsString>) -> Result<(), GpuError> {
    const VAR: &str = "WGPU_BACKEND";
    let Some(value) = value else {
        return Ok(());
    };
    let accepted = || {
        BACKEND_NAMES
            .iter()
            .map(|names| match names {
                [name] => name.to_string(),
                [name, others @ ..] => format!("{name} ({})", others.join(", ")),
                [] => unreachable!("every backend has a name"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let bad = |value: String, why: String| GpuError::Setting {
        var: VAR,
        value,
        why: format!(
            "{why}; it takes a comma-separated list of {}, or unset it to search every backend",
            accepted()
        ),
    };
    let Some(text) = value.to_str() else {
        return Err(bad(value.to_string_lossy().into_owned(), "not text".into()));
    };
    for item in text.split(',').map(str::trim) {
        let known = BACKEND_NAMES
            .iter()
            .flat_map(|names| names.iter())
            .any(|n| n.eq_ignore_ascii_case(item));
        if !known {
            let why = if item.is_empty() {
                "an empty backend name".to_string()
            } else {
                format!("unknown backend {item:?}")
            };
            return Err(bad(text.to_string(), why));
        }
    }
    Ok(())
}

/// The message of [`GpuError::NoAdapter`]: the driver to install only when the search was not
/// narrowed to backends that may not exist here.
fn no_adapter_message() -> String {
    match std::env::var("WGPU_BACKEND") {
        Ok(b) => format!(
            "no GPU adapter found among the backends WGPU_BACKEND={b:?} names (unset it to \
             search every backend)"
        ),
        Err(_) => "no GPU adapter found (for a software one on Debian: apt-get install \
                   mesa-vulkan-drivers; WGPU_BACKEND and WGPU_ADAPTER_NAME narrow the search)"
            .to_string(),
    }
}

/// What `rollsim devices` shows of an adapter.
#[derive(Clone, Debug, Serialize)]
pub struct AdapterSummary {
    pub name: String,
    pub device_type: String,
    pub backend: String,
    pub driver: String,
    pub driver_info: String,
    /// A real GPU, that `--backend auto` would take.
    pub real_gpu: bool,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub timestamp_queries: bool,
}

fn is_real_gpu(info: &wgpu::AdapterInfo) -> bool {
    matches!(
        info.device_type,
        wgpu::DeviceType::DiscreteGpu
            | wgpu::DeviceType::IntegratedGpu
            | wgpu::DeviceType::VirtualGpu
    )
}

/// Preference among adapters: discrete, integrated, virtual, unknown, software.
fn rank(info: &wgpu::AdapterInfo) -> u8 {
    match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

fn summary(adapter: &wgpu::Adapter) -> AdapterSummary {
    let info = adapter.get_info();
    let limits = adapter.limits();
    AdapterSummary {
        name: info.name.clone(),
        device_type: format!("{:?}", info.device_type),
        backend: info.backend.to_string(),
        driver: info.driver.clone(),
        driver_info: info.driver_info.clone(),
        real_gpu: is_real_gpu(&info),
        max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
        max_buffer_size: limits.max_buffer_size,
        max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
        max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
        timestamp_queries: adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY),
    }
}

/// Gives GPU drivers a private runtime directory when `XDG_RUNTIME_DIR` is unset, as in
/// containers and CI: Mesa otherwise prints "XDG_RUNTIME_DIR is invalid or not set" twice on
/// stderr at every probe. Call it at the start of `main`, before any thread starts: it sets an
/// environment variable.
pub fn prepare_driver_environment() {
    #[cfg(unix)]
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        let dir = std::env::temp_dir().join(format!("rollsim-runtime-{uid}"));
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        // Only a directory of our own that no one else can enter (XDG's rule).
        let private = std::fs::symlink_metadata(&dir)
            .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o077 == 0);
        if private {
            // SAFETY: called before any other thread exists (see above), so nothing reads the
            // environment concurrently.
            unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
        }
    }
}

fn instance() -> wgpu::Instance {
    // Honours WGPU_BACKEND (and wgpu's other instance variables).
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

/// The adapters this process can see, WGPU_ADAPTER_NAME applied, best first.
fn adapters() -> Result<Vec<wgpu::Adapter>, GpuError> {
    check_backend_setting(std::env::var_os("WGPU_BACKEND"))?;
    let wanted = match std::env::var("WGPU_ADAPTER_NAME") {
        Err(std::env::VarError::NotUnicode(v)) => {
            return Err(GpuError::Setting {
                var: "WGPU_ADAPTER_NAME",
                value: v.to_string_lossy().into_owned(),
                why: "not text; give part of an adapter's name, as `rollsim devices` lists them"
                    .into(),
            });
        }
        w => w.ok(),
    };
    let mut all = pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all()));
    if let Some(wanted) = wanted {
        let w = wanted.to_lowercase();
        all.retain(|a| a.get_info().name.to_lowercase().contains(&w));
        if all.is_empty() {
            return Err(GpuError::NoAdapterNamed(wanted));
        }
    }
    all.sort_by_key(|a| rank(&a.get_info()));
    Ok(all)
}

/// Every adapter found, and the index of the one `--backend auto` takes (none: CPU threads).
pub fn list_adapters() -> Result<(Vec<AdapterSummary>, Option<usize>), GpuError> {
    let all = adapters()?;
    let summaries: Vec<AdapterSummary> = all.iter().map(summary).collect();
    let auto = summaries.iter().position(|s| s.real_gpu);
    Ok((summaries, auto))
}

/// The process's GPU: one adapter, one device and queue, and what went wrong on it.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    pub limits: wgpu::Limits,
    pub timestamps: bool,
    /// The device runs f64 arithmetic in shaders (SHADER_F64).
    pub f64: bool,
    /// Compute shaders may use subgroup operations (SUBGROUP).
    pub subgroups: bool,
    /// Set by the device-lost callback: the device is gone for good.
    lost: Arc<Mutex<Option<String>>>,
    /// Set by an error no scope captured; taken by the next check.
    uncaptured: Arc<Mutex<Option<String>>>,
}

/// How long a submission may run before rollsim calls the GPU hung. Kernels are split so that
/// a dispatch takes milliseconds on a desktop GPU; lavapipe on 2 cores needs seconds.
pub const POLL_TIMEOUT: Duration = Duration::from_secs(600);

impl Gpu {
    fn open(adapter: wgpu::Adapter) -> Result<Gpu, GpuError> {
        let summary = summary(&adapter);
        // Timestamps for the benchmark, f64 for the bearoff sweep and subgroups for reductions,
        // where the adapter has them.
        let features = adapter.features()
            & (wgpu::Features::TIMESTAMP_QUERY
                | wgpu::Features::SHADER_F64
                | wgpu::Features::SUBGROUP);
        let timestamps = features.contains(wgpu::Features::TIMESTAMP_QUERY);
        // Ask for the adapter's own storage and buffer sizes: large jobs are split to fit them.
        let al = adapter.limits();
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: al.max_storage_buffer_binding_size,
            max_buffer_size: al.max_buffer_size,
            max_compute_workgroups_per_dimension: al.max_compute_workgroups_per_dimension,
            max_storage_buffers_per_shader_stage: al.max_storage_buffers_per_shader_stage,
            ..wgpu::Limits::downlevel_defaults()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("rollsim"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| GpuError::RequestDevice {
            adapter: summary.name.clone(),
            reason: e.to_string(),
        })?;
        let lost = Arc::new(Mutex::new(None));
        let on_lost = lost.clone();
        device.set_device_lost_callback(move |reason, message| {
            on_lost
                .lock()
                .unwrap()
                .get_or_insert(format!("{reason:?}: {message}"));
        });
        let uncaptured = Arc::new(Mutex::new(None));
        let on_error = uncaptured.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            on_error.lock().unwrap().get_or_insert(e.to_string());
        }));
        Ok(Gpu {
            device,
            queue,
            adapter: summary,
            limits,
            timestamps,
            f64: features.contains(wgpu::Features::SHADER_F64),
            subgroups: features.contains(wgpu::Features::SUBGROUP),
            lost,
            uncaptured,
        })
    }

    /// The process's GPU for `backend`: `None` for `cpu`, and for `auto` when no real GPU exists.
    /// Opened on first use and shared by every later call; a process uses one adapter.
    pub fn for_backend(backend: Backend) -> Result<Option<&'static Gpu>, GpuError> {
        static GPU: OnceLock<Gpu> = OnceLock::new();
        /// Held while adapters are searched and a device opened, so that threads asking at
        /// once open one device between them.
        static OPENING: Mutex<bool> = Mutex::new(false);
        if backend == Backend::Cpu {
            return Ok(None);
        }
        let found = |g: &'static Gpu| (backend == Backend::Gpu || g.adapter.real_gpu).then_some(g);
        if let Some(g) = GPU.get() {
            return Ok(found(g));
        }
        // The flag: `auto` already found that the best adapter is a software one.
        let mut software_only = OPENING.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = GPU.get() {
            return Ok(found(g));
        }
        if backend == Backend::Auto && *software_only {
            return Ok(None);
        }
        let Some(best) = adapters()?.into_iter().next() else {
            return match backend {
                Backend::Auto => Ok(None),
                _ => Err(GpuError::NoAdapter),
            };
        };
        if backend == Backend::Auto && !is_real_gpu(&best.get_info()) {
            *software_only = true;
            return Ok(None);
        }
        let gpu = Gpu::open(best)?;
        Ok(found(GPU.get_or_init(|| gpu)))
    }

    /// Any adapter, for `--backend gpu` and the GPU tests.
    pub fn any() -> Result<&'static Gpu, GpuError> {
        Gpu::for_backend(Backend::Gpu).map(|g| g.expect("gpu backend always yields a device"))
    }

    /// A lost device, or an error that no scope captured since the last check.
    pub fn check(&self, doing: &str) -> Result<(), GpuError> {
        if let Some(msg) = self.lost.lock().unwrap().clone() {
            return Err(GpuError::Lost(msg));
        }
        match self.uncaptured.lock().unwrap().take() {
            Some(msg) => Err(GpuError::Validation(doing.to_string(), msg)),
            None => Ok(()),
        }
    }

    /// Runs `f` inside out-of-memory and validation error scopes, so that an allocation that
    /// fails becomes an error rather than a panic in wgpu's default handler.
    pub fn scoped<T>(&self, doing: &str, f: impl FnOnce() -> T) -> Result<T, GpuError> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        if let Some(e) = o {
            return Err(GpuError::OutOfMemory(format!("{doing}: {e}")));
        }
        if let Some(e) = v {
            return Err(GpuError::Validation(doing.to_string(), e.to_string()));
        }
        self.check(doing)?;
        Ok(out)
    }

    /// Finishes `encoder` (inside error scopes, so that an invalid command is this call's
    /// error), submits it and waits, with a timeout, turning loss and hangs into errors.
    pub fn submit_and_wait(
        &self,
        encoder: wgpu::CommandEncoder,
        doing: &str,
    ) -> Result<(), GpuError> {
        let index = self.submit(encoder, doing)?;
        self.wait(index, doing)
    }

    /// Submits `encoder` and returns at once: [`Gpu::read_after`] waits for it.
    pub fn submit(
        &self,
        encoder: wgpu::CommandEncoder,
        doing: &str,
    ) -> Result<wgpu::SubmissionIndex, GpuError> {
        let commands = self.scoped(doing, || encoder.finish())?;
        Ok(self.queue.submit([commands]))
    }

    fn wait(&self, index: wgpu::SubmissionIndex, doing: &str) -> Result<(), GpuError> {
        let r = self.device.poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: Some(POLL_TIMEOUT),
        });
        self.check(doing)?;
        match r {
            Ok(_) => Ok(()),
            Err(wgpu::PollError::Timeout) => Err(GpuError::Timeout(POLL_TIMEOUT)),
            Err(e) => Err(GpuError::Lost(e.to_string())),
        }
    }

    /// Maps `buffers` (created with MAP_READ) and copies out their first bytes, as many as
    /// given, as values of `T`, once everything submitted is done.
    pub fn read<T: bytemuck::Pod>(
        &self,
        buffers: &[(&wgpu::Buffer, u64)],
    ) -> Result<Vec<Vec<T>>, GpuError> {
        self.read_after(None, buffers)
    }

    /// [`Gpu::read`] once submission `index` is done (and those before it), whatever was
    /// submitted after it.
    pub fn read_after<T: bytemuck::Pod>(
        &self,
        index: Option<wgpu::SubmissionIndex>,
        buffers: &[(&wgpu::Buffer, u64)],
    ) -> Result<Vec<Vec<T>>, GpuError> {
        let (tx, rx) = std::sync::mpsc::channel();
        for (i, (b, len)) in buffers.iter().enumerate() {
            let tx = tx.clone();
            b.slice(..*len)
                .map_async(wgpu::MapMode::Read, move |r| tx.send((i, r)).unwrap_or(()));
        }
        drop(tx);
        let r = self.device.poll(wgpu::PollType::Wait {
            submission_index: index,
            timeout: Some(POLL_TIMEOUT),
        });
        self.check("reading results back")?;
        if let Err(e) = r {
            return Err(match e {
                wgpu::PollError::Timeout => GpuError::Timeout(POLL_TIMEOUT),
                e => GpuError::Lost(e.to_string()),
            });
        }
        for (_, r) in rx.iter() {
            r.map_err(|e| GpuError::Lost(format!("mapping a result buffer: {e}")))?;
        }
        let mut out = Vec::with_capacity(buffers.len());
        for (b, len) in buffers {
            let view = b
                .slice(..*len)
                .get_mapped_range()
                .map_err(|e| GpuError::Lost(format!("reading a result buffer: {e}")))?;
            out.push(bytemuck::pod_collect_to_vec(&view));
            drop(view);
            b.unmap();
        }
        Ok(out)
    }

    /// A bind group layout of compute-stage `entries`, and the pipeline layout of it alone.
    pub fn compute_layout(
        &self,
        label: &str,
        entries: &[wgpu::BindGroupLayoutEntry],
    ) -> (wgpu::BindGroupLayout, wgpu::PipelineLayout) {
        let bind = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(label),
                entries,
            });
        let pipeline = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: &[Some(&bind)],
                immediate_size: 0,
            });
        (bind, pipeline)
    }

    /// A buffer holding `data`.
    pub fn buffer_with(
        &self,
        label: &str,
        data: &[u8],
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer, GpuError> {
        use wgpu::util::DeviceExt;
        self.scoped(&format!("allocating {label}"), || {
            self.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents: data,
                    usage,
                })
        })
    }

    /// An uninitialised buffer.
    pub fn buffer(
        &self,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer, GpuError> {
        self.scoped(&format!("allocating {label} ({size} bytes)"), || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// A compute pipeline from a composed WGSL kernel, entry point `main`; `layout: None` lets
    /// wgpu derive the layout from the shader.
    pub fn pipeline(
        &self,
        kernel: &Kernel,
        layout: Option<&wgpu::PipelineLayout>,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        self.pipeline_source(kernel.name, &kernel.source(), "main", layout)
    }

    /// The pipeline of entry point `entry` of WGSL `source` (a kernel made at run time).
    pub fn pipeline_source(
        &self,
        name: &str,
        source: &str,
        entry: &str,
        layout: Option<&wgpu::PipelineLayout>,
    ) -> Result<wgpu::ComputePipeline, GpuError> {
        self.scoped(&format!("compiling {name}"), || {
            let module = self
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(name),
                    source: wgpu::ShaderSource::Wgsl(source.into()),
                });
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(name),
                    layout,
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: None,
                })
        })
    }
}

/// A bind group entry for a whole buffer.
pub fn whole(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// A compute-stage buffer in a bind group layout.
pub fn layout_entry(
    binding: u32,
    ty: wgpu::BufferBindingType,
    has_dynamic_offset: bool,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Workgroup counts for `groups` workgroups within the per-dimension limit: `(x, y)` with
/// `x * y >= groups`; kernels rebuild the linear index as `y_id * x + x_id` and drop the excess.
pub fn grid(groups: u32, max_per_dim: u32) -> (u32, u32) {
    if groups <= max_per_dim {
        (groups.max(1), 1)
    } else {
        (max_per_dim, groups.div_ceil(max_per_dim))
    }
}

/// For GPU tests: the device, or `None` with a note that the test skipped; a failure instead
/// where every test's needs are required ([`rollsim_core::testing::required`]).
#[doc(hidden)]
pub fn test_gpu(test: &str) -> Option<&'static Gpu> {
    rollsim_core::testing::need(test, "GPU adapter", Gpu::any())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_every_group_within_limits() {
        assert_eq!(grid(0, 65535), (1, 1));
        assert_eq!(grid(100, 65535), (100, 1));
        assert_eq!(grid(65535, 65535), (65535, 1));
        let (x, y) = grid(200_000, 65535);
        assert!(x <= 65535 && y <= 65535 && u64::from(x) * u64::from(y) >= 200_000);
    }

    #[test]
    fn backend_settings_name_the_unknown_value_and_the_accepted_ones() {
        let check = |v: &str| check_backend_setting(Some(v.into()));
        for ok in [
            "vulkan",
            "VK",
            " gl , metal",
            "dx12,d3d12,webgpu,noop,opengl,gles,mtl",
        ] {
            check(ok).unwrap();
        }
        check_backend_setting(None).unwrap();
        for (bad, names) in [
            ("garbage", "unknown backend \"garbage\""),
            ("vulkan,garbage", "unknown backend \"garbage\""),
            ("vulkan,,gl", "an empty backend name"),
            ("", "an empty backend name"),
            ("vulkan,", "an empty backend name"),
        ] {
            let e = check(bad).unwrap_err();
            assert!(e.is_bad_setting());
            let m = e.to_string();
            assert!(
                m.starts_with(&format!("WGPU_BACKEND={bad:?}: {names};")),
                "{m}"
            );
            assert!(
                m.contains("vulkan (vk)") && m.contains("dx12 (d3d12)"),
                "{m}"
            );
        }
    }

    #[test]
    fn impossible_allocations_are_errors_not_panics() {
        let Some(g) = test_gpu("impossible_allocations_are_errors_not_panics") else {
            return;
        };
        let too_big = g.limits.max_buffer_size + 4;
        let e = g
            .buffer("huge", too_big, wgpu::BufferUsages::STORAGE)
            .unwrap_err();
        assert!(e.to_string().contains("huge"), "{e}");
        // The device is still usable afterwards.
        g.buffer("small", 256, wgpu::BufferUsages::STORAGE).unwrap();
    }
}
