//! A WGSL kernel: its parts, composed in order, and its validation with naga.
//!
//! WGSL has no imports: a kernel is the concatenation of its parts, shared parts first. The
//! shared parts declare only types, functions and constants; every binding is declared in the
//! kernel's own part, the last, so that a shared part never fixes another kernel's layout
//! ([`Kernel::validate`] checks it).
//! Every source is in `rollsim-shaders` (`shaders/`); each game crate composes its kernels
//! beside their CPU twins, and this crate only the Philox check, which no game owns.

/// A kernel: a name, the constants it shares with its host (written into the WGSL from the
/// Rust values, so that the two cannot drift), and its WGSL parts in order.
pub struct Kernel {
    pub name: &'static str,
    pub constants: &'static [(&'static str, Constant)],
    pub parts: &'static [&'static str],
}

/// A constant's value, as a WGSL `u32` or an array of them.
pub enum Constant {
    U32(u32),
    Bytes(&'static [u8]),
}

impl Kernel {
    /// The composed WGSL: the constants, then the parts.
    pub fn source(&self) -> String {
        let mut s = String::new();
        for (name, value) in self.constants {
            s += &match value {
                Constant::U32(v) => format!("const {name}: u32 = {v}u;\n"),
                Constant::Bytes(b) => {
                    let items: Vec<String> = b.iter().map(|x| format!("{x}u")).collect();
                    format!(
                        "const {name} = array<u32, {}>({});\n",
                        b.len(),
                        items.join(", ")
                    )
                }
            };
        }
        s + &self.parts.concat()
    }

    /// Validates the kernel ([`validate_wgsl`], f64 allowed: the kernels that use it run only
    /// where the adapter has it), checks it has a `main` entry point and that its shared
    /// parts declare no binding, and returns naga's module.
    pub fn validate(&self) -> Result<naga::Module, String> {
        let module = validate_wgsl(self.name, &self.source(), true)?;
        if !module.entry_points.iter().any(|e| e.name == "main") {
            return Err(format!("{} has no main", self.name));
        }
        let own = self.source().len() - self.parts.last().map_or(0, |p| p.len());
        for (h, var) in module.global_variables.iter() {
            let at = module.global_variables.get_span(h).to_range();
            if var.binding.is_some() && at.is_some_and(|r| r.start < own) {
                return Err(format!(
                    "{}: `{}` is bound in a shared part; bindings belong to the kernel's own part",
                    self.name,
                    var.name.as_deref().unwrap_or("?")
                ));
            }
        }
        Ok(module)
    }
}

/// [`check_params`] for a host struct and its fields in order:
/// `check_params!(module, 4, Params { key, rollouts })`.
#[macro_export]
macro_rules! check_params {
    ($module:expr, $binding:expr, $t:ident { $($field:ident),+ $(,)? }) => {
        $crate::kernel::check_params(
            &$module,
            $binding,
            ::std::mem::size_of::<$t>(),
            &[$((stringify!($field), ::std::mem::offset_of!($t, $field))),+],
        )
    };
}

/// Checks a host's parameter block against the struct the WGSL binds at `@group(0)
/// @binding(binding)` as a uniform: the same size, and members of these names at these byte
/// offsets, in order (`std::mem::offset_of!` on the host side).
pub fn check_params(
    module: &naga::Module,
    binding: u32,
    size: usize,
    members: &[(&str, usize)],
) -> Result<(), String> {
    let var = module
        .global_variables
        .iter()
        .map(|(_, v)| v)
        .find(|v| {
            v.binding
                .as_ref()
                .is_some_and(|b| b.group == 0 && b.binding == binding)
        })
        .ok_or(format!("nothing is bound at binding {binding}"))?;
    if var.space != naga::AddressSpace::Uniform {
        return Err(format!("binding {binding} is not a uniform"));
    }
    let naga::TypeInner::Struct {
        members: wgsl,
        span,
    } = &module.types[var.ty].inner
    else {
        return Err(format!("binding {binding} is not a struct"));
    };
    let wgsl: Vec<(&str, usize)> = wgsl
        .iter()
        .map(|m| (m.name.as_deref().unwrap_or("?"), m.offset as usize))
        .collect();
    if *span as usize != size || wgsl != members {
        return Err(format!(
            "binding {binding}: the host has {size} bytes {members:?}, the WGSL {span} bytes \
             {wgsl:?}"
        ));
    }
    Ok(())
}

/// Parses and validates WGSL with naga, the shader compiler inside wgpu (no GPU needed), with
/// f64 arithmetic allowed or not; the error names `name` and shows where.
pub fn validate_wgsl(name: &str, source: &str, f64: bool) -> Result<naga::Module, String> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| format!("{name}: {}", e.emit_to_string(source)))?;
    // Subgroup operations are allowed: a kernel that uses them runs only where the adapter has
    // them, as one with f64 does.
    let capabilities = naga::valid::Capabilities::SUBGROUP
        | if f64 {
            naga::valid::Capabilities::FLOAT64
        } else {
            naga::valid::Capabilities::empty()
        };
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities)
        .validate(&module)
        .map_err(|e| format!("{name}: {}", e.emit_to_string(source)))?;
    Ok(module)
}

/// Philox4x32-10 and random streams: `shaders/shared/philox.wgsl`, twin of `rollsim_core::rng`.
pub const PHILOX: &str = rollsim_shaders::shared::PHILOX;

/// Raw Philox blocks and bounded draws, checked against `rollsim_core::rng` and its known
/// answers.
pub const PHILOX_CHECK: Kernel = Kernel {
    name: "philox_check",
    constants: &[],
    parts: &[PHILOX, rollsim_shaders::checks::PHILOX],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_philox_check_validates_with_naga() {
        PHILOX_CHECK.validate().unwrap_or_else(|e| panic!("{e}"));
    }

    /// A binding in a shared part, and parameters that drifted from the host's, are refused.
    #[test]
    fn shared_bindings_and_drifted_parameters_are_refused() {
        const BOUND: &str = "@group(0) @binding(0) var<storage, read> t: array<u32>;\n";
        const OWN: &str = "struct P { a: u32, b: vec2<u32> }
            @group(0) @binding(1) var<uniform> p: P;
            @compute @workgroup_size(1) fn main() { let x = t[0] + p.a; }";
        let shared = Kernel {
            name: "shared",
            constants: &[],
            parts: &[BOUND, OWN],
        };
        let e = shared.validate().unwrap_err();
        assert!(e.contains("`t` is bound in a shared part"), "{e}");
        let whole = [BOUND, OWN].concat();
        let module = validate_wgsl("own", &whole, false).unwrap();
        check_params(&module, 1, 16, &[("a", 0), ("b", 8)]).unwrap();
        for (size, members) in [
            (16, &[("a", 0), ("b", 4)][..]),
            (12, &[("a", 0), ("b", 8)][..]),
            (16, &[("a", 0), ("c", 8)][..]),
            (16, &[("a", 0)][..]),
        ] {
            assert!(
                check_params(&module, 1, size, members).is_err(),
                "{members:?}"
            );
        }
        assert!(
            check_params(&module, 0, 16, &[])
                .unwrap_err()
                .contains("not a uniform")
        );
        assert!(check_params(&module, 2, 16, &[]).is_err());
    }

    /// The WGSL generator against the Rust one, on the known answers and on random inputs.
    #[test]
    fn wgsl_philox_equals_rust_philox() {
        use crate::test_gpu;
        use rollsim_core::rng::{Stream, philox4x32_10};
        let Some(g) = test_gpu("wgsl_philox_equals_rust_philox") else {
            return;
        };
        let mut inputs: Vec<[u32; 8]> = vec![
            [0, 0, 0, 0, 0, 0, 1, 0],
            [
                u32::MAX,
                u32::MAX,
                u32::MAX,
                u32::MAX,
                u32::MAX,
                u32::MAX,
                10,
                0,
            ],
            [
                0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 24, 0,
            ],
        ];
        let mut src = Stream::new(99, [1, 2, 3]);
        let bounds = [1, 2, 3, 10, 24, 160, 1 << 31, u32::MAX];
        for i in 0..253 {
            let mut row: [u32; 8] = std::array::from_fn(|_| src.next_u32());
            row[6] = bounds[i % bounds.len()];
            inputs.push(row);
        }
        let bytes: &[u8] = bytemuck::cast_slice(&inputs);
        let input = g
            .buffer_with("philox inputs", bytes, wgpu::BufferUsages::STORAGE)
            .unwrap();
        use wgpu::BufferUsages as U;
        let output = g
            .buffer(
                "philox outputs",
                bytes.len() as u64,
                U::STORAGE | U::COPY_SRC,
            )
            .unwrap();
        let read = g
            .buffer(
                "philox readback",
                bytes.len() as u64,
                U::MAP_READ | U::COPY_DST,
            )
            .unwrap();
        let pipeline = g.pipeline(&PHILOX_CHECK, None).unwrap();
        let bind = g.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: input.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: output.as_entire_binding(),
                },
            ],
        });
        let mut enc = g.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups((inputs.len() as u32).div_ceil(64), 1, 1);
        }
        enc.copy_buffer_to_buffer(&output, 0, &read, 0, bytes.len() as u64);
        g.submit_and_wait(enc, "philox check").unwrap();
        let out = g
            .read::<u32>(&[(&read, bytes.len() as u64)])
            .unwrap()
            .remove(0);
        for (i, inp) in inputs.iter().enumerate() {
            let block = philox4x32_10([inp[0], inp[1], inp[2], inp[3]], [inp[4], inp[5]]);
            let seed = u64::from(inp[4]) | u64::from(inp[5]) << 32;
            let mut s = Stream::new(seed, [inp[1], inp[2], inp[3]]);
            let draws: Vec<u32> = (0..4).map(|_| s.below(inp[6])).collect();
            assert_eq!(&out[8 * i..8 * i + 4], &block, "block {i}");
            assert_eq!(&out[8 * i + 4..8 * i + 8], &draws[..], "draws {i}");
        }
    }
}
