/* real_access.c — storing a double as any element type (see real_access.h). */
#include "real_access.h"

#include "half.h"

void kiln_store_converted(kiln_dtype dtype, void *data, uint64_t i, double value)
{
    switch (dtype) {
    case KILN_F32: ((float *)data)[i] = (float)value; break;
    case KILN_F64: ((double *)data)[i] = value; break;
    case KILN_F16: ((uint16_t *)data)[i] = kiln_f64_to_f16(value); break;
    case KILN_BF16: ((uint16_t *)data)[i] = kiln_f64_to_bf16(value); break;
    case KILN_I8: ((int8_t *)data)[i] = (int8_t)value; break;
    case KILN_I16: ((int16_t *)data)[i] = (int16_t)value; break;
    case KILN_I32: ((int32_t *)data)[i] = (int32_t)value; break;
    case KILN_I64: ((int64_t *)data)[i] = (int64_t)value; break;
    case KILN_U8: ((uint8_t *)data)[i] = (uint8_t)value; break;
    case KILN_U16: ((uint16_t *)data)[i] = (uint16_t)value; break;
    case KILN_U32: ((uint32_t *)data)[i] = (uint32_t)value; break;
    case KILN_U64: ((uint64_t *)data)[i] = (uint64_t)value; break;
    case KILN_BOOL: ((uint8_t *)data)[i] = value != 0.0; break;
    default: break;
    }
}
