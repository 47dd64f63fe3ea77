/* hrr_xor_bytes's PTX entry (thread i of the grid, blockIdx.x * blockDim.x + threadIdx.x,
 * xors p[i] with the key's low byte), whole: a GPU
 * runs it, so the programs of this directory run on the H200 as well as against the
 * stand-in, which reads only the entry's name and parameters. */
#ifndef HRR_XOR_PTX_H
#define HRR_XOR_PTX_H

#define XOR_ENTRY                                                                         \
    ".visible .entry hrr_xor_bytes(.param .u64 p0, .param .u64 p1)\n{\n"                \
    " .reg .b64 %rd<5>;\n .reg .b32 %r<6>;\n"                                            \
    " ld.param.u64 %rd1, [p0];\n ld.param.u64 %rd2, [p1];\n"                             \
    " cvta.to.global.u64 %rd1, %rd1;\n mov.u32 %r1, %tid.x;\n mov.u32 %r4, %ctaid.x;\n" \
    " mov.u32 %r5, %ntid.x;\n mad.lo.u32 %r1, %r4, %r5, %r1;\n cvt.u64.u32 %rd3, %r1;\n" \
    " add.s64 %rd4, %rd1, %rd3;\n ld.global.u8 %r2, [%rd4];\n cvt.u32.u64 %r3, %rd2;\n" \
    " xor.b32 %r2, %r2, %r3;\n st.global.u8 [%rd4], %r2;\n ret;\n}\n"

#endif
