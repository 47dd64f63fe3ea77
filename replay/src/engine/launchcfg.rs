//! Launch configuration at replay: function settings applied to replay's own function
//! of the recorded kernel (`cuFuncSetAttribute`, `cuFuncSetCacheConfig`,
//! `cuFuncSetSharedMemConfig`; under HIP the runtime's `hipFuncSet*`, which validate and
//! keep nothing on AMD), cooperative launches (`cuLaunchCooperativeKernel` /
//! `hipModuleLaunchCooperativeKernel`), launches with attributes (`cuLaunchKernelEx` with
//! every recorded attribute, pointers and events inside them translated; an attribute
//! replay cannot honour fails naming it) and `hipExtLaunchKernel` (through
//! `hipExtModuleLaunchKernel`, with its events).

use std::os::raw::{c_int, c_uint, c_void};

use hrr_archive::api::launch_config::{
    self, cache_config_name, func_attribute, launch_attribute_name, launch_attribute_value,
    shared_mem_config_name, AttrValue, RecordedAttr,
};
use hrr_archive::api::sigs;
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::Payload;
use hrr_archive::Event;

use super::ctx::Ctx;
use super::error::{EvResult, EventError};
use super::kernels::PreparedLaunch;

/// A function setting as recorded, with the value replay passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Setting {
    /// The call replay makes.
    pub(super) call: &'static str,
    /// What it sets (the attribute or configuration passed), and the value.
    pub(super) what: i64,
    pub(super) value: Option<i64>,
}

/// Decides the call and arguments of a function setting record `id` for `vendor`: a
/// runtime function attribute becomes the driver's (`CUfunction_attribute`); a value with
/// no mapping is refused by name.
pub(super) fn plan_setting(vendor: Vendor, id: u16, p: &Payload) -> Result<Setting, EventError> {
    let value = p.i64(fid::CONFIG_VALUE, "value")?;
    let unknown = |what: String, why: &str| EventError::CannotHonour {
        what,
        why: why.to_string(),
    };
    match id {
        semantic::FUNC_SET_ATTRIBUTE => {
            let attr = p.i64(fid::FUNC_ATTRIBUTE, "function attribute")?;
            let known = func_attribute(attr).ok_or_else(|| {
                unknown(
                    format!("function attribute {attr}"),
                    "not a settable cudaFuncAttribute this replay knows",
                )
            })?;
            Ok(match vendor {
                Vendor::Cuda => Setting {
                    call: "cuFuncSetAttribute",
                    what: known.driver,
                    value: Some(value),
                },
                Vendor::Hip => Setting {
                    call: "hipFuncSetAttribute",
                    what: attr,
                    value: Some(value),
                },
            })
        }
        semantic::FUNC_SET_CACHE_CONFIG => {
            cache_config_name(value).ok_or_else(|| {
                unknown(
                    format!("cache configuration {value}"),
                    "not a cudaFuncCache value",
                )
            })?;
            Ok(Setting {
                call: match vendor {
                    Vendor::Cuda => "cuFuncSetCacheConfig",
                    Vendor::Hip => "hipFuncSetCacheConfig",
                },
                what: value,
                value: None,
            })
        }
        _ => {
            shared_mem_config_name(value).ok_or_else(|| {
                unknown(
                    format!("shared memory configuration {value}"),
                    "not a cudaSharedMemConfig value",
                )
            })?;
            Ok(Setting {
                call: match vendor {
                    Vendor::Cuda => "cuFuncSetSharedMemConfig",
                    Vendor::Hip => "hipFuncSetSharedMemConfig",
                },
                what: value,
                value: None,
            })
        }
    }
}

/// The attributes of a launch as replay passes them: plain values verbatim (unknown ids
/// included), device addresses and events translated; `translate` and `event` give None
/// for what this replay never created, and the attribute is then refused by name.
pub(super) fn plan_attrs(
    attrs: Vec<RecordedAttr>,
    mut translate: impl FnMut(u64) -> Option<u64>,
    mut event: impl FnMut(u64) -> Option<u64>,
) -> Result<Vec<RecordedAttr>, EventError> {
    let refuse = |a: &RecordedAttr, why: String| EventError::CannotHonour {
        what: format!("launch attribute {}", launch_attribute_name(a.id)),
        why,
    };
    let mut out = Vec::with_capacity(attrs.len());
    for mut a in attrs {
        match launch_attribute_value(a.id) {
            AttrValue::Plain => {}
            AttrValue::DevPtrAt(at) => {
                let v = a.word(at);
                let t = translate(v).ok_or_else(|| {
                    refuse(
                        &a,
                        format!("address {v:#x} lies in no allocation of this replay"),
                    )
                })?;
                a.set_word(at, t);
            }
            AttrValue::EventAt(at) => {
                let v = a.word(at);
                let t = event(v).ok_or_else(|| {
                    refuse(
                        &a,
                        format!("event {v:#x} was never created in this capture"),
                    )
                })?;
                a.set_word(at, t);
            }
            AttrValue::Refused(why) => return Err(refuse(&a, why.to_string())),
        }
        out.push(a);
    }
    Ok(out)
}

/// The recorded attributes of a LaunchKernelEx record, in order.
fn recorded_attrs(p: &Payload) -> Result<Vec<RecordedAttr>, EventError> {
    let mut out = Vec::new();
    for f in p.all(fid::LAUNCH_ATTR) {
        let n = f.as_nested()?;
        let id = n.u64(fid::LAUNCH_ATTR_ID, "launch attribute id")?;
        let id = u32::try_from(id).map_err(|_| {
            EventError::Inconsistent(format!("launch attribute id {id} does not fit 32 bits"))
        })?;
        let v = n.bytes(fid::LAUNCH_ATTR_VALUE, "launch attribute value")?;
        let value = v.try_into().map_err(|_| {
            EventError::Inconsistent(format!(
                "launch attribute {}: {} value bytes, not {}",
                launch_attribute_name(id),
                v.len(),
                launch_config::ATTR_VALUE_SIZE
            ))
        })?;
        out.push(RecordedAttr { id, value });
    }
    Ok(out)
}

/// `CUlaunchConfig` (cuda.h, CUDA 12+).
#[repr(C)]
struct CuLaunchConfig {
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shmem: c_uint,
    stream: *mut c_void,
    attrs: *mut u8,
    num_attrs: c_uint,
}

impl Ctx<'_> {
    /// A function setting, applied to replay's function of the recorded kernel.
    pub(super) fn replay_func_setting(&mut self, ev: &Event) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let name = p.str(fid::NAME, "kernel name")?.to_string();
        let co = p.str(fid::CODE_OBJECT, "code object")?.to_string();
        let s = plan_setting(self.rt.vendor, ev.header.api_id, &p)?;
        // A function (or library kernel) the program looked up itself is set in its own
        // instance, the one its launches run (`prepare_launch`); a registered kernel's
        // stub is never such a handle.
        let instance = p
            .u64(fid::HOST_STUB, "function")
            .ok()
            .and_then(|h| self.code.function_instances.get(&h).copied());
        let func = match instance {
            Some(f) => f,
            None => self.code.function(self.rt, self.proc_, &co, &name)?,
        } as usize as *mut c_void;
        let r = match s.value {
            Some(v) => {
                // SAFETY: cuFuncSetAttribute / hipFuncSetAttribute have this C type.
                let f = unsafe { self.rt.typed::<sigs::FuncSetAttribute>(s.call) }?;
                // SAFETY: `func` is replay's.
                unsafe { f(func.cast_const(), s.what as c_int, v as c_int) }
            }
            None => {
                // SAFETY: cuFuncSet{Cache,SharedMem}Config and the hip twins have this C type.
                let f = unsafe { self.rt.typed::<sigs::FuncSetConfig>(s.call) }?;
                // SAFETY: as above.
                unsafe { f(func.cast_const(), s.what as c_int) }
            }
        };
        match self.rt.vendor {
            // The driver's error numbers are not the runtime's: success or failure.
            Vendor::Cuda => match (ev.header.ret == 0, r == 0) {
                (true, true) => Ok(()),
                (false, false) => {
                    self.checks.counts.failed_as_captured += 1;
                    Ok(())
                }
                _ => Err(EventError::LaunchReturnCode {
                    call: s.call,
                    kernel: name,
                    got: r,
                    want: ev.header.ret,
                }),
            },
            Vendor::Hip => self
                .checks
                .check_ret(ev, hrr_archive::api::RetPolicy::Exact, r),
        }
    }

    /// A cooperative launch, a launch with attributes, or a hipExtLaunchKernel.
    pub(super) fn replay_configured_launch(&mut self, ev: &Event) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let id = ev.header.api_id;
        let attrs = if id == semantic::LAUNCH_KERNEL_EX {
            let recorded = recorded_attrs(&p)?;
            let addrs = &self.tr.addrs;
            let handles = &self.tr.handles;
            plan_attrs(
                recorded,
                |v| match addrs.translate(v) {
                    crate::translate::Translated::Mapped(a) => Some(a),
                    crate::translate::Translated::Null => Some(0),
                    crate::translate::Translated::Unmapped => None,
                },
                |e| {
                    if e == 0 {
                        Some(0)
                    } else {
                        handles.get(&e).copied()
                    }
                },
            )?
        } else {
            Vec::new()
        };
        let events = if id == semantic::HIP_EXT_LAUNCH {
            let start = self.handle(p.handle(fid::START_EVENT, "start event")?)?;
            let stop = self.handle(p.handle(fid::STOP_EVENT, "stop event")?)?;
            let flags = p.i64(fid::LAUNCH_FLAGS, "launch flags")?;
            Some((start, stop, flags))
        } else {
            None
        };
        let mut l = self.prepare_launch(&p)?;
        if self.filtered_out(ev.header.seq, &l.name) {
            return Ok(());
        }
        let timed = super::timing::start(self.timing.as_mut(), self.rt, l.stream)?;
        let (call, r) = match (id, self.rt.vendor) {
            (semantic::LAUNCH_COOPERATIVE, vendor) => {
                let call = match vendor {
                    Vendor::Cuda => "cuLaunchCooperativeKernel",
                    Vendor::Hip => "hipModuleLaunchCooperativeKernel",
                };
                // SAFETY: both have this C type.
                let f = unsafe { self.rt.typed::<sigs::ModuleLaunchCooperative>(call) }?;
                // SAFETY: params point at live arguments; replay's function and stream.
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
                    )
                };
                (call, r)
            }
            (semantic::LAUNCH_KERNEL_EX, Vendor::Cuda) => {
                ("cuLaunchKernelEx", self.launch_ex(&mut l, &attrs)?)
            }
            (semantic::HIP_EXT_LAUNCH, Vendor::Hip) => {
                let (start, stop, flags) = events.unwrap_or((0, 0, 0));
                (
                    "hipExtModuleLaunchKernel",
                    self.ext_launch(&mut l, start, stop, flags)?,
                )
            }
            _ => {
                return Err(EventError::Unsupported(
                    "a launch path of the other vendor than this archive's runtime",
                ))
            }
        };
        if r == 0 {
            super::timing::stop(self.timing.as_mut(), self.rt, &l.name, timed, l.stream)?;
        }
        let kernel = if attrs.is_empty() {
            l.name.clone()
        } else {
            let names: Vec<String> = attrs.iter().map(|a| launch_attribute_name(a.id)).collect();
            format!("{} with launch attributes [{}]", l.name, names.join(", "))
        };
        self.launch_outcome(ev, call, kernel, r)
    }

    /// `cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void** params, void** extra)`.
    fn launch_ex(
        &mut self,
        l: &mut PreparedLaunch,
        attrs: &[RecordedAttr],
    ) -> Result<c_int, EventError> {
        // SAFETY: cuLaunchKernelEx has this C type.
        let f = unsafe { self.rt.typed::<sigs::LaunchKernelEx>("cuLaunchKernelEx") }?;
        let mut encoded: Vec<u8> = attrs.iter().flat_map(|a| a.encode()).collect();
        let cfg = CuLaunchConfig {
            grid: l.grid,
            block: l.block,
            shmem: l.shmem,
            stream: l.stream as usize as *mut c_void,
            attrs: if encoded.is_empty() {
                std::ptr::null_mut()
            } else {
                encoded.as_mut_ptr()
            },
            num_attrs: attrs.len() as c_uint,
        };
        // SAFETY: CUresult cuLaunchKernelEx(const CUlaunchConfig*, CUfunction, void**,
        // void**); the config, its attributes and the arguments live across the call.
        Ok(unsafe {
            f(
                (&cfg as *const CuLaunchConfig).cast(),
                l.func as usize as *mut c_void,
                l.params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }

    /// `hipExtModuleLaunchKernel`: global work size in work items (grid x block).
    fn ext_launch(
        &mut self,
        l: &mut PreparedLaunch,
        start: u64,
        stop: u64,
        flags: i64,
    ) -> Result<c_int, EventError> {
        // SAFETY: hipExtModuleLaunchKernel has this C type.
        let f = unsafe {
            self.rt
                .typed::<sigs::ExtModuleLaunchKernel>("hipExtModuleLaunchKernel")
        }?;
        let global = |i: usize| l.grid[i].saturating_mul(l.block[i]);
        // SAFETY: hipExtModuleLaunchKernel(hipFunction_t, 6 x uint32_t, size_t, hipStream_t,
        // void**, void**, hipEvent_t, hipEvent_t, uint32_t); arguments live across the call.
        Ok(unsafe {
            f(
                l.func as usize as *mut c_void,
                global(0),
                global(1),
                global(2),
                l.block[0],
                l.block[1],
                l.block[2],
                l.shmem as usize,
                l.stream as usize as *mut c_void,
                l.params.as_mut_ptr(),
                std::ptr::null_mut(),
                start as usize as *mut c_void,
                stop as usize as *mut c_void,
                flags as u32,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_archive::payload::PayloadWriter;

    fn attr(id: u32, words: &[u64]) -> RecordedAttr {
        let mut a = RecordedAttr { id, value: [0; 64] };
        for (i, w) in words.iter().enumerate() {
            a.set_word(i * 8, *w);
        }
        a
    }

    #[test]
    fn attributes_keep_plain_values_and_translate_pointers_and_events() {
        let attrs = vec![
            attr(4, &[0x0000_0001_0000_0002, 1]), // ClusterDimension {2, 1, 1}
            attr(1, &[0x7000_0040, 4096]),        // AccessPolicyWindow {base, bytes}
            attr(12, &[0xe0, 0]),                 // LaunchCompletionEvent {event, flags}
            attr(77, &[0xdead]),                  // an id CUDA 13 does not define
        ];
        let out = plan_attrs(
            attrs.clone(),
            |v| Some(v + 0x1000),
            |e| (e == 0xe0).then_some(0xe1),
        )
        .unwrap();
        assert_eq!(out[0], attrs[0]);
        assert_eq!((out[1].word(0), out[1].word(8)), (0x7000_1040, 4096));
        assert_eq!(out[2].word(0), 0xe1);
        assert_eq!(out[3], attrs[3], "unknown ids are replayed verbatim");
    }

    #[test]
    fn an_attribute_replay_cannot_honour_fails_naming_it() {
        let e = plan_attrs(vec![attr(7, &[0xee])], Some, |_| None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot honour launch attribute ProgrammaticEvent: event 0xee was never created in this capture"
        );
        let e = plan_attrs(vec![attr(1, &[0x5])], |_| None, Some).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot honour launch attribute AccessPolicyWindow"),
            "{e}"
        );
        let e = plan_attrs(vec![attr(13, &[1])], Some, Some).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot honour launch attribute DeviceUpdatableKernelNode"),
            "{e}"
        );
    }

    #[test]
    fn recorded_attributes_decode_in_order_and_short_values_are_refused() {
        let mut w = PayloadWriter::new();
        for a in [attr(2, &[1]), attr(8, &[3])] {
            w.nested_with(fid::LAUNCH_ATTR, |n| {
                n.u64(fid::LAUNCH_ATTR_ID, a.id as u64);
                n.bytes(fid::LAUNCH_ATTR_VALUE, &a.value, false);
            });
        }
        let bytes = w.finish();
        let got = recorded_attrs(&Payload::parse(&bytes).unwrap()).unwrap();
        assert_eq!(got, vec![attr(2, &[1]), attr(8, &[3])]);
        let mut w = PayloadWriter::new();
        w.nested_with(fid::LAUNCH_ATTR, |n| {
            n.u64(fid::LAUNCH_ATTR_ID, 4);
            n.bytes(fid::LAUNCH_ATTR_VALUE, &[0; 12], false);
        });
        let bytes = w.finish();
        let e = recorded_attrs(&Payload::parse(&bytes).unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "launch attribute ClusterDimension: 12 value bytes, not 64"
        );
    }

    fn setting(fill: impl FnOnce(&mut PayloadWriter)) -> Vec<u8> {
        let mut w = PayloadWriter::new();
        fill(&mut w);
        w.finish()
    }

    #[test]
    fn function_settings_map_to_the_drivers_calls_and_numbers() {
        let bytes = setting(|w| {
            w.i64(fid::FUNC_ATTRIBUTE, 16).i64(fid::CONFIG_VALUE, 1);
        });
        let p = Payload::parse(&bytes).unwrap();
        let s = plan_setting(Vendor::Cuda, semantic::FUNC_SET_ATTRIBUTE, &p).unwrap();
        assert_eq!(
            s,
            Setting {
                call: "cuFuncSetAttribute",
                what: 17,
                value: Some(1)
            }
        );
        let s = plan_setting(Vendor::Hip, semantic::FUNC_SET_ATTRIBUTE, &p).unwrap();
        assert_eq!((s.call, s.what), ("hipFuncSetAttribute", 16));
        let bytes = setting(|w| {
            w.i64(fid::FUNC_ATTRIBUTE, 3).i64(fid::CONFIG_VALUE, 1);
        });
        let p = Payload::parse(&bytes).unwrap();
        let e = plan_setting(Vendor::Cuda, semantic::FUNC_SET_ATTRIBUTE, &p).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot honour function attribute 3"),
            "{e}"
        );
        let bytes = setting(|w| {
            w.i64(fid::CONFIG_VALUE, 2);
        });
        let p = Payload::parse(&bytes).unwrap();
        let s = plan_setting(Vendor::Cuda, semantic::FUNC_SET_CACHE_CONFIG, &p).unwrap();
        assert_eq!((s.call, s.what, s.value), ("cuFuncSetCacheConfig", 2, None));
        let s = plan_setting(Vendor::Cuda, semantic::FUNC_SET_SHARED_MEM_CONFIG, &p).unwrap();
        assert_eq!(s.call, "cuFuncSetSharedMemConfig");
        let bytes = setting(|w| {
            w.i64(fid::CONFIG_VALUE, 9);
        });
        let p = Payload::parse(&bytes).unwrap();
        assert!(plan_setting(Vendor::Hip, semantic::FUNC_SET_CACHE_CONFIG, &p).is_err());
    }
}
