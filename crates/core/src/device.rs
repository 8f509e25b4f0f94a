//! Where a computation ran, as every report names it.

use std::fmt;

/// The device a job ran on: CPU threads or a GPU adapter (`--backend` chooses it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    Cpu,
    Gpu,
}

impl Device {
    /// `Gpu` where a GPU did the work, else `Cpu`.
    pub fn of(gpu: bool) -> Device {
        if gpu { Device::Gpu } else { Device::Cpu }
    }

    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialized_ones() {
        for d in [Device::Cpu, Device::Gpu] {
            assert_eq!(serde_json::to_value(d).unwrap(), d.name());
            assert_eq!(format!("{d:<4}|"), format!("{:<4}|", d.name()));
        }
    }
}
