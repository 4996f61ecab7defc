/*
 * half_feature.h — required feature bit 0, "half-precision values": which
 * programs need it, and the rule a loader applies to it.
 *
 * Why a feature bit rather than new op versions: a runtime of format 1.0
 * knows the dtype codes of f16 and bf16 but cannot run them, and it refuses
 * every required feature bit it does not know. Setting the bit exactly when
 * a program holds a half-precision value makes such a runtime refuse the
 * file cleanly, before it looks at any op (spec/compatibility.md §2).
 */
#ifndef KILN_LIB_HALF_FEATURE_H
#define KILN_LIB_HALF_FEATURE_H

#include <stdbool.h>

#include "model.h"

/*
 * @return true if some input, weight or node result of `m` is f16 or bf16.
 * Node results are looked at only once kiln_model_infer has typed them
 * (value_types set).
 */
bool kiln_model_holds_half(const kiln_model *m);

/* The required feature bits a writer sets for `m` (format.md §6). */
uint64_t kiln_model_required_features(const kiln_model *m);

#endif
