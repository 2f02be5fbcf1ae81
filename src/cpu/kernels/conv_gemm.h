/* conv_gemm.h -- CONV_2D's forward as a GEMM (conv_gemm.c), used by
 * conv_direct.c's kernel where it applies. */
#ifndef GGMLR_CONV_GEMM_H
#define GGMLR_CONV_GEMM_H

#include "cpu/kernels/kernels.h"

/* the scratch a thread needs for dst by the GEMM; 0: dst is not for it
 * (not CONV_2D, not F32 data, no outputs, or too many taps) */
size_t ggmlr_conv_gemm_work_size(const struct ggml_tensor * dst);

/* dst = CONV_2D(kernel, data), for a dst with a work size above 0 */
void ggmlr_conv_gemm_forward(const struct ggmlr_compute_params * prm, struct ggml_tensor * dst);

#endif
