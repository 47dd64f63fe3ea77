//! Kernel launches: arguments laid out, pointers and object handles inside them
//! translated, pinned snapshots restored, the function found by code object or by the
//! program's own lookup (`Code`), the launch's outcome against capture's.

use std::os::raw::{c_int, c_uint, c_void};

use hrr_archive::api::sigs;
use hrr_archive::api::{fid, Vendor};
use hrr_archive::payload::Payload;
use hrr_archive::Event;

use super::ctx::Ctx;
use super::error::{EvResult, EventError};

/// Where each argument starts in one block: every argument at a 16-byte boundary
/// (parameters are read at their natural alignment), and the block's length.
fn arg_layout(lens: &[usize]) -> (Vec<usize>, usize) {
    let mut offsets = Vec::with_capacity(lens.len());
    let mut total = 0usize;
    for &n in lens {
        offsets.push(total);
        total += n.div_ceil(16) * 16;
    }
    (offsets, total)
}

/// Translates the device pointers inside one argument's bytes in place. `words` is the
/// argument's pointer-word list: the byte offsets (u64, little-endian) of the 8-byte
/// words that held device pointers at capture; a word past the argument's end is left alone.
pub(super) fn translate_pointer_words(
    slot: &mut [u8],
    words: &[u8],
    mut translate: impl FnMut(u64) -> u64,
) -> Result<(), EventError> {
    if !words.len().is_multiple_of(8) {
        return Err(EventError::Inconsistent(format!(
            "payload: pointer-word list of {} bytes is not whole words",
            words.len()
        )));
    }
    for w in words.chunks_exact(8) {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8])) as usize;
        if w.checked_add(8).is_some_and(|end| end <= slot.len()) {
            let v = u64::from_le_bytes(slot[w..w + 8].try_into().unwrap_or([0; 8]));
            let t = translate(v);
            slot[w..w + 8].copy_from_slice(&t.to_le_bytes());
        }
    }
    Ok(())
}

impl Ctx<'_> {
    /// A launch record's kernel, shape and arguments, ready for whichever launch call
    /// its path takes: pinned snapshots restored, every argument's bytes in one
    /// 16-byte-aligned block with pointer words translated in place.
    pub(super) fn prepare_launch(&mut self, p: &Payload) -> Result<PreparedLaunch, EventError> {
        let name = p.str(fid::NAME, "kernel name")?.to_string();
        let co = p.str(fid::CODE_OBJECT, "code object")?;
        let grid: [u64; 3] = p.u64_array_of(fid::GRID, "grid")?;
        let block: [u64; 3] = p.u64_array_of(fid::BLOCK, "block")?;
        let shmem = p.u64(fid::SHARED_MEM, "shared memory")?;
        let stream = self.handle(p.handle(fid::STREAM, "stream")?)?;
        self.snapshots
            .restore(self.rt, self.proc_, &self.tr, &self.owned, p)?;
        let args: Vec<Payload> = p
            .all(fid::ARG)
            .map(|a| a.as_nested())
            .collect::<Result<_, _>>()?;
        let values: Vec<&[u8]> = args
            .iter()
            .map(|a| a.bytes(fid::ARG_BYTES, "argument bytes"))
            .collect::<Result<_, _>>()?;
        let (offsets, total) = arg_layout(&values.iter().map(|v| v.len()).collect::<Vec<_>>());
        // Over-allocated by 16 so the first slot can start at a 16-byte boundary.
        let mut arg_block = vec![0u8; total + 16];
        let pad = arg_block.as_ptr().align_offset(16).min(16);
        for ((arg, value), &at) in args.iter().zip(&values).zip(&offsets) {
            let slot = &mut arg_block[pad + at..pad + at + value.len()];
            slot.copy_from_slice(value);
            if let Some(words) = arg.get(fid::ARG_POINTER_WORDS) {
                translate_pointer_words(slot, words.value, |v| self.translate(v))?;
            }
            if let Some(words) = arg.get(fid::ARG_OBJECT_WORDS) {
                let objects = &self.owned.objects;
                super::textures::map_object_words(slot, words.value, |v| objects.in_argument(v))?;
            }
        }
        // A module function the program looked up itself runs in its own instance (the
        // keys are captured function handles: a registered kernel's host stub, another
        // object of the same process, can never equal one).
        let instance = p
            .handle(fid::KERNEL, "kernel")
            .ok()
            .and_then(|k| self.code.function_instances.get(&k).copied());
        let func = match instance {
            Some(f) => f,
            None => self.code.function(self.rt, self.proc_, co, &name)?,
        };
        self.code.check_arguments(self.rt, func, &name, &values)?;
        let params: Vec<*mut c_void> = offsets
            .iter()
            .map(|&at| arg_block[pad + at..].as_mut_ptr().cast())
            .collect();
        Ok(PreparedLaunch {
            name,
            func,
            grid: grid.map(|v| v as c_uint),
            block: block.map(|v| v as c_uint),
            shmem: shmem as c_uint,
            stream,
            _arg_block: arg_block,
            params,
        })
    }

    /// A launch call's result against capture's: the runtime's and the driver's error
    /// numbers differ, so success and failure are compared.
    pub(super) fn launch_outcome(
        &mut self,
        ev: &Event,
        call: &'static str,
        kernel: String,
        r: c_int,
    ) -> EvResult {
        match (ev.header.ret == 0, r == 0) {
            (true, true) => {
                self.checks.counts.kernels_launched += 1;
                crate::watchdog::launched(ev.header.seq, &kernel);
                Ok(())
            }
            (false, false) => {
                self.checks.counts.failed_as_captured += 1;
                Ok(())
            }
            _ => Err(EventError::LaunchReturnCode {
                call,
                kernel,
                got: r,
                want: ev.header.ret,
            }),
        }
    }

    /// Whether `--kernel-filter` leaves out the launch at `seq` of kernel `name` (counted;
    /// the D2H checks after the first one left out are skipped: `Checks::record`).
    pub(super) fn filtered_out(&mut self, seq: u64, name: &str) -> bool {
        let out = self.code.filtered_out(name);
        if out {
            self.checks.filtered(seq);
        }
        out
    }

    pub(super) fn replay_launch(&mut self, ev: &Event) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let mut l = self.prepare_launch(&p)?;
        if self.filtered_out(ev.header.seq, &l.name) {
            return Ok(());
        }
        let timed = super::timing::start(self.timing.as_mut(), self.rt, l.stream)?;
        let launch = match self.rt.vendor {
            Vendor::Cuda => "cuLaunchKernel",
            Vendor::Hip => "hipModuleLaunchKernel",
        };
        // SAFETY: cuLaunchKernel / hipModuleLaunchKernel have this C type.
        let f = unsafe { self.rt.typed::<sigs::ModuleLaunchKernel>(launch) }?;
        // SAFETY: params point at live argument buffers; replay's function and stream.
        let r = unsafe {
            f(
                l.func as usize as *mut c_void,
                l.grid[0],
                l.grid[1],
                l.grid[2],
                l.block[0],
                l.block[1],
                l.block[2],
                l.shmem,
                l.stream as usize as *mut c_void,
                l.params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        if r == 0 {
            super::timing::stop(self.timing.as_mut(), self.rt, &l.name, timed, l.stream)?;
        }
        self.launch_outcome(ev, launch, l.name, r)
    }
}

/// A launch ready to issue: the replay function, the shape, and the argument pointers
/// (`params`, pointing into the block this keeps alive).
pub(super) struct PreparedLaunch {
    pub(super) name: String,
    pub(super) func: u64,
    pub(super) grid: [c_uint; 3],
    pub(super) block: [c_uint; 3],
    pub(super) shmem: c_uint,
    pub(super) stream: u64,
    _arg_block: Vec<u8>,
    pub(super) params: Vec<*mut c_void>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_start_at_16_byte_boundaries() {
        assert_eq!(
            arg_layout(&[4, 8, 17, 0, 16]),
            (vec![0, 16, 32, 64, 64], 80)
        );
        assert_eq!(arg_layout(&[]), (vec![], 0));
    }

    /// A by-value struct of 16 bytes holding a device pointer at offset 8: the pointer is
    /// translated, the other word kept (the control `struct_arg_pointers` guards this).
    #[test]
    fn pointer_words_inside_a_struct_argument_are_translated() {
        let mut slot = [0u8; 16];
        slot[..8].copy_from_slice(&42u64.to_le_bytes());
        slot[8..].copy_from_slice(&0x7000_0000u64.to_le_bytes());
        let words = 8u64.to_le_bytes();
        translate_pointer_words(&mut slot, &words, |v| v + 0x100).unwrap();
        assert_eq!(u64::from_le_bytes(slot[..8].try_into().unwrap()), 42);
        assert_eq!(
            u64::from_le_bytes(slot[8..].try_into().unwrap()),
            0x7000_0100
        );
        // A plain pointer argument is one word at offset 0.
        let mut ptr = 0x10u64.to_le_bytes();
        translate_pointer_words(&mut ptr, &0u64.to_le_bytes(), |v| v * 2).unwrap();
        assert_eq!(u64::from_le_bytes(ptr), 0x20);
    }

    #[test]
    fn pointer_words_outside_the_argument_or_torn_are_refused_or_skipped() {
        let mut slot = [1u8; 12];
        // Offset 8 + 8 runs past 12 bytes: left alone.
        translate_pointer_words(&mut slot, &8u64.to_le_bytes(), |_| 0).unwrap();
        assert_eq!(slot, [1u8; 12]);
        let e = translate_pointer_words(&mut slot, &[0u8; 5], |_| 0).unwrap_err();
        assert!(e.to_string().contains("not whole words"), "{e}");
    }
}
