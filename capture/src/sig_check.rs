//! Each hand-written shim capture exports for a function that replay also calls outside
//! the table has the C type `hrr_archive::api::sigs` declares for it: checked when the
//! crate compiles (a shim whose parameters drift from the registry's type does not
//! coerce to it, and the build fails). Replay looks the same functions up by the same
//! types (`Runtime::typed`), so both sides' views of them are one declaration.

use hrr_archive::api::sigs;

/// `const _: sigs::T = shim;` for every shim listed under its type.
macro_rules! shims_have_types {
    ($( $ty:ident: $( $shim:path ),+ ; )*) => {
        $( $( const _: sigs::$ty = $shim; )+ )*
    };
}

shims_have_types! {
    NoArgs: crate::range::cudaProfilerStart, crate::range::cudaProfilerStop,
        crate::range::cuProfilerStart, crate::range::cuProfilerStop,
        crate::range::hipProfilerStart, crate::range::hipProfilerStop;
    ModuleLoadData: crate::modules::cuModuleLoadData, crate::modules::hipModuleLoadData;
    ModuleGetFunction: crate::modules::cuModuleGetFunction, crate::modules::hipModuleGetFunction;
    ModuleGetGlobal: crate::driver::cuModuleGetGlobal_v2, crate::driver::hipModuleGetGlobal;
    ModuleLaunchKernel: crate::modules::cuLaunchKernel, crate::modules::hipModuleLaunchKernel,
        crate::modules::cuLaunchKernel_ptsz;
    ExtModuleLaunchKernel: crate::modules::hipExtModuleLaunchKernel;
    ModuleLaunchCooperative: crate::launchcfg::cuLaunchCooperativeKernel,
        crate::launchcfg::cuLaunchCooperativeKernel_ptsz,
        crate::launchcfg::hipModuleLaunchCooperativeKernel;
    LaunchKernelEx: crate::driver::cuLaunchKernelEx;
    FuncSetAttribute: crate::launchcfg::cuFuncSetAttribute, crate::launchcfg::cudaFuncSetAttribute,
        crate::launchcfg::hipFuncSetAttribute;
    FuncSetConfig: crate::launchcfg::cuFuncSetCacheConfig, crate::launchcfg::cuFuncSetSharedMemConfig,
        crate::launchcfg::cudaFuncSetCacheConfig, crate::launchcfg::hipFuncSetCacheConfig,
        crate::launchcfg::cudaFuncSetSharedMemConfig, crate::launchcfg::hipFuncSetSharedMemConfig;
    GraphLaunch: crate::graph_launch::cudaGraphLaunch, crate::graph_launch::cuGraphLaunch,
        crate::graph_launch::hipGraphLaunch;
    GraphAddKernelNode: crate::kernel_node::cudaGraphAddKernelNode,
        crate::kernel_node::hipGraphAddKernelNode, crate::kernel_node::cuGraphAddKernelNode_v2;
    GraphKernelNodeSetParams: crate::kernel_node::cudaGraphKernelNodeSetParams,
        crate::kernel_node::hipGraphKernelNodeSetParams,
        crate::kernel_node::cuGraphKernelNodeSetParams_v2;
    GraphExecKernelNodeSetParams: crate::kernel_node::cudaGraphExecKernelNodeSetParams,
        crate::kernel_node::hipGraphExecKernelNodeSetParams,
        crate::kernel_node::cuGraphExecKernelNodeSetParams_v2;
}
