//! Launch configuration that changes what a kernel may do: the function attributes
//! (`cudaFuncSetAttribute`), cache and shared-memory configurations, and the launch
//! attributes of `cudaLaunchKernelExC`, with the driver's numbering replay applies them
//! by. Capture records the runtime's values as the program passed them; replay maps them
//! here, and refuses by name a value it has no mapping for.

/// A `cudaFuncAttribute` the runtime accepts in `cudaFuncSetAttribute`, with the
/// `CUfunction_attribute` replay passes to `cuFuncSetAttribute` (the numbers differ from
/// 16 on: the driver inserted DEVICE_NODE_UPDATE_SUPPORTED at 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuncAttribute {
    pub runtime: i64,
    pub driver: i64,
    pub name: &'static str,
    /// hipFuncAttribute has it (HIP 5.2: the first two only).
    pub hip: bool,
}

/// Every settable `cudaFuncAttribute` of CUDA 13 (driver_types.h), by runtime value.
pub const FUNC_ATTRIBUTES: &[FuncAttribute] = &[
    FuncAttribute {
        runtime: 8,
        driver: 8,
        name: "MaxDynamicSharedMemorySize",
        hip: true,
    },
    FuncAttribute {
        runtime: 9,
        driver: 9,
        name: "PreferredSharedMemoryCarveout",
        hip: true,
    },
    FuncAttribute {
        runtime: 10,
        driver: 10,
        name: "ClusterDimMustBeSet",
        hip: false,
    },
    FuncAttribute {
        runtime: 11,
        driver: 11,
        name: "RequiredClusterWidth",
        hip: false,
    },
    FuncAttribute {
        runtime: 12,
        driver: 12,
        name: "RequiredClusterHeight",
        hip: false,
    },
    FuncAttribute {
        runtime: 13,
        driver: 13,
        name: "RequiredClusterDepth",
        hip: false,
    },
    FuncAttribute {
        runtime: 14,
        driver: 14,
        name: "NonPortableClusterSizeAllowed",
        hip: false,
    },
    FuncAttribute {
        runtime: 15,
        driver: 15,
        name: "ClusterSchedulingPolicyPreference",
        hip: false,
    },
    FuncAttribute {
        runtime: 16,
        driver: 17,
        name: "SharedMemoryMode",
        hip: false,
    },
];

/// The function attribute with this runtime value.
pub fn func_attribute(runtime: i64) -> Option<&'static FuncAttribute> {
    FUNC_ATTRIBUTES.iter().find(|a| a.runtime == runtime)
}

/// The function attribute with this `CUfunction_attribute` value (`cuFuncSetAttribute`,
/// `cuKernelSetAttribute`).
pub fn func_attribute_of_driver(driver: i64) -> Option<&'static FuncAttribute> {
    FUNC_ATTRIBUTES.iter().find(|a| a.driver == driver)
}

/// `cudaFuncCache` / `hipFuncCache_t` and `CUfunc_cache` share their values 0-3 (none,
/// shared, L1, equal); `cudaSharedMemConfig` / `hipSharedMemConfig` and
/// `CUsharedconfig` share 0-2 (default, four-byte, eight-byte banks). The name of a
/// value, or None for one outside them.
pub fn cache_config_name(v: i64) -> Option<&'static str> {
    Some(match v {
        0 => "PreferNone",
        1 => "PreferShared",
        2 => "PreferL1",
        3 => "PreferEqual",
        _ => return None,
    })
}

pub fn shared_mem_config_name(v: i64) -> Option<&'static str> {
    Some(match v {
        0 => "BankSizeDefault",
        1 => "BankSizeFourByte",
        2 => "BankSizeEightByte",
        _ => return None,
    })
}

/// `cudaLaunchAttribute` and `CUlaunchAttribute` (identical on x86-64): a 4-byte id, 4
/// bytes of padding, a 64-byte value union.
pub const ATTR_SIZE: usize = 72;
pub const ATTR_VALUE_OFFSET: usize = 8;
pub const ATTR_VALUE_SIZE: usize = 64;

/// What a launch attribute's value holds that is only meaningful in the captured
/// process, and so what replay does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrValue {
    /// Plain values (flags, dimensions, priorities): passed as captured.
    Plain,
    /// A device address at this byte offset of the value: translated.
    DevPtrAt(usize),
    /// An event handle at this byte offset of the value: mapped like every event.
    EventAt(usize),
    /// Replay cannot honour it (why): the launch fails naming the attribute.
    Refused(&'static str),
}

/// A launch attribute id: runtime and driver share the numbering (driver_types.h
/// `cudaLaunchAttributeID`, cuda.h `CUlaunchAttributeID`, CUDA 13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchAttribute {
    pub id: u32,
    pub name: &'static str,
    pub value: AttrValue,
}

macro_rules! launch_attrs {
    ($( ($id:literal, $name:literal, $value:expr) ),* $(,)?) => {
        /// Every launch attribute CUDA 13 defines.
        pub const LAUNCH_ATTRIBUTES: &[LaunchAttribute] = &[
            $( LaunchAttribute { id: $id, name: $name, value: $value } ),*
        ];
    };
}

launch_attrs! {
    (0, "Ignore", AttrValue::Plain),
    // {void* base_ptr; size_t num_bytes; float hitRatio; hitProp; missProp}
    (1, "AccessPolicyWindow", AttrValue::DevPtrAt(0)),
    (2, "Cooperative", AttrValue::Plain),
    (3, "SynchronizationPolicy", AttrValue::Plain),
    (4, "ClusterDimension", AttrValue::Plain),
    (5, "ClusterSchedulingPolicyPreference", AttrValue::Plain),
    (6, "ProgrammaticStreamSerialization", AttrValue::Plain),
    // {cudaEvent_t event; int flags; int triggerAtBlockStart}
    (7, "ProgrammaticEvent", AttrValue::EventAt(0)),
    (8, "Priority", AttrValue::Plain),
    (9, "MemSyncDomainMap", AttrValue::Plain),
    (10, "MemSyncDomain", AttrValue::Plain),
    (11, "PreferredClusterDimension", AttrValue::Plain),
    // {cudaEvent_t event; int flags}
    (12, "LaunchCompletionEvent", AttrValue::EventAt(0)),
    (13, "DeviceUpdatableKernelNode", AttrValue::Refused("valid for graph kernel nodes only; its device node handle is an output of the captured process")),
    (14, "PreferredSharedMemoryCarveout", AttrValue::Plain),
    (16, "NvlinkUtilCentricScheduling", AttrValue::Plain),
    (17, "PortableClusterSizeMode", AttrValue::Plain),
    (18, "SharedMemoryMode", AttrValue::Plain),
}

/// What replay knows of a launch attribute id. An id CUDA 13 does not define is kept
/// verbatim by capture and replayed verbatim: its value is treated as plain.
pub fn launch_attribute(id: u32) -> Option<&'static LaunchAttribute> {
    LAUNCH_ATTRIBUTES.iter().find(|a| a.id == id)
}

/// An attribute's name for messages: its CUDA name, or `attribute N` for an id this
/// build does not know.
pub fn launch_attribute_name(id: u32) -> String {
    launch_attribute(id)
        .map(|a| a.name.to_string())
        .unwrap_or_else(|| format!("attribute {id}"))
}

/// How replay treats an attribute's value: unknown ids are plain (kept verbatim).
pub fn launch_attribute_value(id: u32) -> AttrValue {
    launch_attribute(id).map_or(AttrValue::Plain, |a| a.value)
}

/// One launch attribute as recorded: its id and its 64-byte value, verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedAttr {
    pub id: u32,
    pub value: [u8; ATTR_VALUE_SIZE],
}

impl RecordedAttr {
    /// Splits one 72-byte `cudaLaunchAttribute` (the padding is dropped).
    pub fn decode(raw: &[u8; ATTR_SIZE]) -> RecordedAttr {
        let mut value = [0u8; ATTR_VALUE_SIZE];
        value.copy_from_slice(&raw[ATTR_VALUE_OFFSET..]);
        RecordedAttr {
            id: u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]),
            value,
        }
    }

    /// The 72-byte `CUlaunchAttribute` replay hands the driver.
    pub fn encode(&self) -> [u8; ATTR_SIZE] {
        let mut b = [0u8; ATTR_SIZE];
        b[..4].copy_from_slice(&self.id.to_le_bytes());
        b[ATTR_VALUE_OFFSET..].copy_from_slice(&self.value);
        b
    }

    /// The 8-byte word of the value at `at` (a pointer or a handle).
    pub fn word(&self, at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.value[at..at + 8]);
        u64::from_le_bytes(w)
    }

    pub fn set_word(&mut self, at: usize, v: u64) {
        self.value[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_attributes_map_to_the_drivers_numbers() {
        let max = func_attribute(8).unwrap();
        assert_eq!((max.driver, max.name), (8, "MaxDynamicSharedMemorySize"));
        // The driver's 16 is DEVICE_NODE_UPDATE_SUPPORTED; the runtime's 16 is its 17.
        assert_eq!(func_attribute(16).unwrap().driver, 17);
        assert!(
            func_attribute(7).is_none(),
            "read-only attributes are not settable"
        );
        assert!(func_attribute(17).is_none());
        let mut seen = std::collections::HashSet::new();
        for a in FUNC_ATTRIBUTES {
            assert!(
                seen.insert(a.driver),
                "{} maps to a driver value twice",
                a.name
            );
        }
        assert_eq!(cache_config_name(2), Some("PreferL1"));
        assert_eq!(cache_config_name(4), None);
        assert_eq!(shared_mem_config_name(2), Some("BankSizeEightByte"));
    }

    #[test]
    fn an_attribute_round_trips_and_unknown_ids_stay_plain() {
        let mut raw = [0u8; ATTR_SIZE];
        raw[..4].copy_from_slice(&4u32.to_le_bytes());
        raw[4..8].copy_from_slice(&[0xaa; 4]); // padding: not recorded
        raw[8..12].copy_from_slice(&2u32.to_le_bytes());
        raw[12..16].copy_from_slice(&1u32.to_le_bytes());
        raw[16..20].copy_from_slice(&1u32.to_le_bytes());
        let a = RecordedAttr::decode(&raw);
        assert_eq!(a.id, 4);
        assert_eq!(launch_attribute_name(a.id), "ClusterDimension");
        let back = a.encode();
        assert_eq!(back[4..8], [0; 4]);
        assert_eq!(back[..4], raw[..4]);
        assert_eq!(back[8..], raw[8..]);
        assert_eq!(launch_attribute_value(99), AttrValue::Plain);
        assert_eq!(launch_attribute_name(99), "attribute 99");
        assert_eq!(launch_attribute_value(7), AttrValue::EventAt(0));
        assert_eq!(launch_attribute_value(1), AttrValue::DevPtrAt(0));
        assert!(matches!(launch_attribute_value(13), AttrValue::Refused(_)));
        let mut e = a.clone();
        e.set_word(8, 0x1234);
        assert_eq!(e.word(8), 0x1234);
        assert_eq!(e.word(0), a.word(0));
    }
}
