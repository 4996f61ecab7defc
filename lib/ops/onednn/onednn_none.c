/*
 * onednn_none.c — onednn.h when kiln is built without oneDNN (meson
 * -Donednn=disabled, or libdnnl not found): no fast path, so every call
 * reports "not run" and linalg.c runs its reference kernels.
 */
#include "onednn.h"

bool kiln_onednn_enabled(void)
{
    return false;
}

uint64_t kiln_onednn_primitives_built(void)
{
    return 0;
}

uint64_t kiln_onednn_fused_runs(void)
{
    return 0;
}

uint64_t kiln_onednn_channels_last_runs(void)
{
    return 0;
}

uint64_t kiln_onednn_magnitude_scans(void)
{
    return 0;
}

uint64_t kiln_onednn_sliced_runs(void)
{
    return 0;
}

kiln_status kiln_onednn_session_new(kiln_onednn_session **out, kiln_error *err)
{
    (void)err;
    *out = NULL;
    return KILN_OK;
}

void kiln_onednn_session_free(kiln_onednn_session *session)
{
    (void)session;
}

kiln_status kiln_onednn_matmul(const kiln_kernel_call *call, bool *ran, kiln_error *err)
{
    (void)call;
    (void)err;
    *ran = false;
    return KILN_OK;
}

kiln_status kiln_onednn_gemm(const kiln_kernel_call *call, bool trans_a, bool trans_b, float alpha, float beta,
                             bool *ran, kiln_error *err)
{
    (void)call, (void)trans_a, (void)trans_b, (void)alpha, (void)beta, (void)err;
    *ran = false;
    return KILN_OK;
}

kiln_status kiln_onednn_strided_product(const kiln_kernel_call *call, const kiln_onednn_product *product, bool *ran,
                                        kiln_error *err)
{
    (void)call, (void)product, (void)err;
    *ran = false;
    return KILN_OK;
}

kiln_status kiln_onednn_conv(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group,
                             bool *ran, kiln_error *err)
{
    (void)call, (void)window, (void)group, (void)err;
    *ran = false;
    return KILN_OK;
}

kiln_status kiln_onednn_conv_transpose(const kiln_kernel_call *call, const kiln_window_axes *window, int64_t group,
                                       bool *ran, kiln_error *err)
{
    (void)call, (void)window, (void)group, (void)err;
    *ran = false;
    return KILN_OK;
}

kiln_status kiln_onednn_pool(const kiln_kernel_call *call, const kiln_window_axes *window,
                             kiln_onednn_pool_kind kind, bool *ran, kiln_error *err)
{
    (void)call, (void)window, (void)kind, (void)err;
    *ran = false;
    return KILN_OK;
}
