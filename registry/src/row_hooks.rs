//! The generic paths' hand-written exceptions, as data beside the table: the rows whose
//! capture or replay takes one step their parameter kinds do not say. Capture's and
//! replay's generic paths look a row up here (replay after `hip_abi::base_row`, so HIP's
//! versioned twins share their base row's hooks) and never name a row themselves; each
//! hook is a variant, so the code that runs it is one exhaustive `match`.

use super::id;

/// One step beyond what a row's parameter kinds say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowHook {
    /// Replay, before the call: an object of replay's own is made first, so the
    /// program's texture objects never get the numbers they had at capture (a handle a
    /// kernel argument passed untranslated then fails its check, never passes by chance).
    TextureObjectNumbering,
    /// As [`RowHook::TextureObjectNumbering`], for surface objects.
    SurfaceObjectNumbering,
    /// Replay, before a stream capture begins: the kernels launched into it are loaded
    /// first (a module load among captured work is one the program never made there).
    PreloadCapturedKernels,
    /// Capture, after a successful call: the runtime's and device's metadata go into the
    /// manifest, once (the first allocation is where the runtime is surely up).
    NoteRuntime,
    /// Replay, after a successful call: the handle it destroyed (its first argument, a
    /// stream or an event) leaves the objects replay destroys at the end.
    Destroys,
    /// Replay, after a successful call: a device's current memory pool was set, so it is
    /// given its default pool back at the end (before the program's pools are destroyed).
    DevicePoolSet(PoolDevice),
    /// Replay, after a successful call: the process handed another process a handle to
    /// its memory or an event (`cudaIpcGetMemHandle`, `cudaIpcGetEventHandle`), so a later
    /// mismatch names that as a possible cause: what the other process wrote, or
    /// recorded, is not replayed.
    SharesWithOtherProcesses,
    /// Replay, after a successful call: the shareable handle it exported (its first
    /// argument, of the type its third names) is a file descriptor of replay's own when
    /// the type is a POSIX one, closed now (nothing at replay receives it).
    ClosesExportedDescriptor,
}

/// Where a pool-setting call names its device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolDevice {
    /// The first argument (`cudaDeviceSetMemPool(int device, pool)`).
    FirstArgument,
    /// The `location` parameter's recorded bytes, when they name a device (CUDA 13's
    /// `cudaMemSetMemPool(cudaMemLocation*, type, pool)`).
    Location,
}

/// Each hooked row, by its row id, with its hook.
pub const ROW_HOOKS: &[(u16, RowHook)] = &[
    (id::CreateTextureObject, RowHook::TextureObjectNumbering),
    (id::CreateSurfaceObject, RowHook::SurfaceObjectNumbering),
    (id::StreamBeginCapture, RowHook::PreloadCapturedKernels),
    (
        id::StreamBeginCaptureToGraph,
        RowHook::PreloadCapturedKernels,
    ),
    (id::Malloc, RowHook::NoteRuntime),
    (id::IpcGetMemHandle, RowHook::SharesWithOtherProcesses),
    (id::IpcGetEventHandle, RowHook::SharesWithOtherProcesses),
    (id::DrvIpcGetMemHandle, RowHook::SharesWithOtherProcesses),
    (id::DrvIpcGetEventHandle, RowHook::SharesWithOtherProcesses),
    (
        id::MemPoolExportToShareableHandle,
        RowHook::SharesWithOtherProcesses,
    ),
    (
        id::MemPoolExportToShareableHandle,
        RowHook::ClosesExportedDescriptor,
    ),
    (id::MemPoolExportPointer, RowHook::SharesWithOtherProcesses),
    (
        id::DrvMemPoolExportToShareableHandle,
        RowHook::SharesWithOtherProcesses,
    ),
    (
        id::DrvMemPoolExportToShareableHandle,
        RowHook::ClosesExportedDescriptor,
    ),
    (
        id::DrvMemPoolExportPointer,
        RowHook::SharesWithOtherProcesses,
    ),
    (id::StreamDestroy, RowHook::Destroys),
    (id::EventDestroy, RowHook::Destroys),
    (id::CuStreamDestroy, RowHook::Destroys),
    (id::CuEventDestroy, RowHook::Destroys),
    (
        id::DeviceSetMemPool,
        RowHook::DevicePoolSet(PoolDevice::FirstArgument),
    ),
    (
        id::DrvDeviceSetMemPool,
        RowHook::DevicePoolSet(PoolDevice::FirstArgument),
    ),
    (
        id::MemSetMemPool,
        RowHook::DevicePoolSet(PoolDevice::Location),
    ),
    (
        id::DrvMemSetMemPool,
        RowHook::DevicePoolSet(PoolDevice::Location),
    ),
];

/// The hooks of row `row`.
pub fn of(row: u16) -> impl Iterator<Item = RowHook> {
    ROW_HOOKS
        .iter()
        .filter(move |(r, _)| *r == row)
        .map(|(_, h)| *h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hook_is_on_a_row_of_the_table_once() {
        for (i, (row, hook)) in ROW_HOOKS.iter().enumerate() {
            assert!(super::super::desc(*row).is_some(), "{hook:?}: no row {row}");
            assert!(
                !ROW_HOOKS[..i].contains(&(*row, *hook)),
                "{hook:?} listed twice for row {row}"
            );
        }
        assert_eq!(of(id::Malloc).collect::<Vec<_>>(), [RowHook::NoteRuntime]);
        // Replay destroys at the end what the program left: never a stream or event the
        // program destroyed itself (the real runtimes crash on a second destroy).
        for row in [
            id::StreamDestroy,
            id::EventDestroy,
            id::CuStreamDestroy,
            id::CuEventDestroy,
        ] {
            assert_eq!(
                of(row).collect::<Vec<_>>(),
                [RowHook::Destroys],
                "row {row}"
            );
        }
        assert_eq!(of(id::Free).count(), 0);
    }
}
