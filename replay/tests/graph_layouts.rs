//! The graph structs capture records as bytes and replay rebuilds have the layouts
//! `hrr_archive::api` assumes: checked by `static_assert` against the real headers, with
//! nvcc (CUDA: `cudaMemAllocNodeParams`, `cudaMemAccessDesc`, `cudaMemsetParams`,
//! `cudaGraphInstantiateParams`, `cudaKernelNodeParams`, the driver's
//! `CUDA_KERNEL_NODE_PARAMS_v1`) and hipcc (HIP: `hipMemsetParams`, `hipKernelNodeParams`). A compiler that is
//! missing is skipped through `hrr_testkit`, saying so (a failure under `CI=true` or
//! `HRR_REQUIRE_ALL=1`; `.ci/install` installs both).

use std::path::Path;
use std::process::Command;

use hrr_archive::api::kernel_node::field_offsets;
use hrr_archive::api::{
    mem_alloc_node as m, Vendor, HIP_MEMSET_PARAMS_SIZE, INSTANTIATE_PARAMS_SIZE,
    MEMSET_PARAMS_SIZE,
};

/// `static_assert`s that `vendor`'s kernel node struct `ty` has the recorded layout;
/// `driver` names the driver struct's fields (`gridDimX`, `blockDimX`).
fn kernel_node_asserts(vendor: Vendor, ty: &str, driver: bool) -> String {
    field_offsets(vendor)
        .iter()
        .map(|&(field, at)| match field {
            "size" => format!("static_assert(sizeof({ty}) == {at}, \"{ty} size\");\n"),
            _ => {
                let name = match (driver, field) {
                    (true, "gridDim") => "gridDimX",
                    (true, "blockDim") => "blockDimX",
                    _ => field,
                };
                format!("static_assert(offsetof({ty}, {name}) == {at}, \"{ty}.{name}\");\n")
            }
        })
        .collect()
}

fn compile(compiler: &Path, args: &[&str], source: &str, name: &str) {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join(name);
    std::fs::write(&src, source).unwrap();
    let o = Command::new(compiler)
        .args(args)
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(d.path().join("layout.o"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}: {}{}",
        compiler.display(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn cuda_graph_structs_have_the_recorded_layouts() {
    let Some(nvcc) = hrr_testkit::tool(&hrr_testkit::tools::NVCC) else {
        return;
    };
    let source = format!(
        r#"#include <cuda_runtime.h>
#include <cuda.h>
#include <cstddef>
static_assert(sizeof(cudaMemAllocNodeParams) == {size}, "size");
static_assert(offsetof(cudaMemAllocNodeParams, accessDescs) == {descs}, "accessDescs");
static_assert(offsetof(cudaMemAllocNodeParams, accessDescCount) == {count}, "accessDescCount");
static_assert(offsetof(cudaMemAllocNodeParams, bytesize) == {bytesize}, "bytesize");
static_assert(offsetof(cudaMemAllocNodeParams, dptr) == {dptr}, "dptr");
static_assert(sizeof(cudaMemAccessDesc) == {desc}, "cudaMemAccessDesc");
static_assert(sizeof(cudaMemsetParams) == {memset}, "cudaMemsetParams");
static_assert(offsetof(cudaMemsetParams, dst) == 0, "cudaMemsetParams.dst");
static_assert(sizeof(cudaGraphInstantiateParams) == {inst}, "cudaGraphInstantiateParams");
static_assert(offsetof(cudaGraphInstantiateParams, flags) == 0, "flags");
static_assert(offsetof(cudaGraphInstantiateParams, uploadStream) == 8, "uploadStream");
{kernel_node}{driver_node}"#,
        kernel_node = kernel_node_asserts(Vendor::Cuda, "cudaKernelNodeParams", false),
        driver_node = kernel_node_asserts(Vendor::Cuda, "CUDA_KERNEL_NODE_PARAMS_v1", true),
        size = m::SIZE,
        descs = m::ACCESS_DESCS,
        count = m::ACCESS_COUNT,
        bytesize = m::BYTESIZE,
        dptr = m::DPTR,
        desc = m::ACCESS_DESC_SIZE,
        memset = MEMSET_PARAMS_SIZE,
        inst = INSTANTIATE_PARAMS_SIZE,
    );
    compile(&nvcc, &["-x", "cu", "-std=c++17"], &source, "layout.cu");
}

#[test]
fn hip_memset_params_have_the_recorded_layout() {
    let Some(hipcc) = hrr_testkit::tool(&hrr_testkit::tools::HIPCC) else {
        return;
    };
    let source = format!(
        r#"#include <hip/hip_runtime.h>
#include <cstddef>
static_assert(sizeof(hipMemsetParams) == {size}, "hipMemsetParams");
static_assert(offsetof(hipMemsetParams, dst) == 0, "hipMemsetParams.dst");
{kernel_node}"#,
        size = HIP_MEMSET_PARAMS_SIZE,
        kernel_node = kernel_node_asserts(Vendor::Hip, "hipKernelNodeParams", false),
    );
    compile(
        &hipcc,
        &["-x", "hip", "--rocm-path=/usr", "--offload-arch=gfx90a"],
        &source,
        "layout.hip",
    );
}
