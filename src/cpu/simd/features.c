/* features.c -- upstream's ggml_cpu_has_* queries. Upstream answers with
 * the instruction sets its build was compiled for; ggmlr's kernels are chosen
 * at run time (vec.c), so these report what this CPU (and the OS, for AVX
 * state) offers, whatever GGMLR_SIMD narrows the kernels to. ARM, RISC-V,
 * POWER, s390 and WebAssembly features are 0 on x86-64 and the x86 ones 0
 * elsewhere; the llamafile kernels do not exist here. */
#include "ggml-cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

/* CPUID leaf 7 subleaf `sub` register `reg` (0 eax, 1 ebx, 2 ecx, 3 edx) bit `bit` */
static int leaf7(unsigned sub, int reg, int bit) {
    unsigned r[4] = {0, 0, 0, 0};
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, sub, r[0], r[1], r[2], r[3]);
    return (r[reg] >> bit) & 1;
}

int ggml_cpu_has_sse3(void)        { __builtin_cpu_init(); return __builtin_cpu_supports("sse3") != 0; }
int ggml_cpu_has_ssse3(void)       { __builtin_cpu_init(); return __builtin_cpu_supports("ssse3") != 0; }
int ggml_cpu_has_avx(void)         { __builtin_cpu_init(); return __builtin_cpu_supports("avx") != 0; }
int ggml_cpu_has_avx2(void)        { __builtin_cpu_init(); return __builtin_cpu_supports("avx2") != 0; }
int ggml_cpu_has_fma(void)         { __builtin_cpu_init(); return __builtin_cpu_supports("fma") != 0; }
int ggml_cpu_has_bmi2(void)        { __builtin_cpu_init(); return __builtin_cpu_supports("bmi2") != 0; }
int ggml_cpu_has_avx512(void)      { __builtin_cpu_init(); return __builtin_cpu_supports("avx512f") != 0; }
int ggml_cpu_has_avx512_vbmi(void) { return ggml_cpu_has_avx512() && leaf7(0, 2, 1); }
int ggml_cpu_has_avx512_vnni(void) { return ggml_cpu_has_avx512() && leaf7(0, 2, 11); }
int ggml_cpu_has_avx512_bf16(void) { return ggml_cpu_has_avx512() && leaf7(1, 0, 5); }
int ggml_cpu_has_avx_vnni(void)    { return ggml_cpu_has_avx2() && leaf7(1, 0, 4); }
int ggml_cpu_has_amx_int8(void)    { return leaf7(0, 3, 25); }
int ggml_cpu_has_f16c(void) {
    unsigned eax, ebx, ecx, edx;  /* CPUID.1:ECX bit 29, and the AVX state the OS saves */
    return ggml_cpu_has_avx() && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
#else
int ggml_cpu_has_sse3(void)        { return 0; }
int ggml_cpu_has_ssse3(void)       { return 0; }
int ggml_cpu_has_avx(void)         { return 0; }
int ggml_cpu_has_avx2(void)        { return 0; }
int ggml_cpu_has_fma(void)         { return 0; }
int ggml_cpu_has_bmi2(void)        { return 0; }
int ggml_cpu_has_avx512(void)      { return 0; }
int ggml_cpu_has_avx512_vbmi(void) { return 0; }
int ggml_cpu_has_avx512_vnni(void) { return 0; }
int ggml_cpu_has_avx512_bf16(void) { return 0; }
int ggml_cpu_has_avx_vnni(void)    { return 0; }
int ggml_cpu_has_amx_int8(void)    { return 0; }
int ggml_cpu_has_f16c(void)        { return 0; }
#endif

int ggml_cpu_has_neon(void)        { return 0; }
int ggml_cpu_has_arm_fma(void)     { return 0; }
int ggml_cpu_has_fp16_va(void)     { return 0; }
int ggml_cpu_has_dotprod(void)     { return 0; }
int ggml_cpu_has_matmul_int8(void) { return 0; }
int ggml_cpu_has_sve(void)         { return 0; }
int ggml_cpu_get_sve_cnt(void)     { return 0; }
int ggml_cpu_has_sme(void)         { return 0; }
int ggml_cpu_has_sme2(void)        { return 0; }
int ggml_cpu_has_riscv_v(void)     { return 0; }
int ggml_cpu_get_rvv_vlen(void)    { return 0; }
int ggml_cpu_has_vsx(void)         { return 0; }
int ggml_cpu_has_vxe(void)         { return 0; }
int ggml_cpu_has_wasm_simd(void)   { return 0; }
int ggml_cpu_has_llamafile(void)   { return 0; }

void ggml_cpu_init(void) {}  /* the SIMD path is chosen on first use (vec.c) */
