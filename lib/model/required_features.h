/*
 * required_features.h — the required feature bits a program needs: bit 0,
 * "half-precision values", and bit 1, "relations across dims" (format
 * 1.3, stored at the end of DIMS).
 *
 * Why a feature bit rather than new op versions: a runtime of format 1.0
 * knows the dtype codes of f16 and bf16 but cannot run them, and it refuses
 * every required feature bit it does not know. Setting the bit exactly when
 * a program holds a half-precision value makes such a runtime refuse the
 * file cleanly, before it looks at any op (spec/compatibility.md §2).
 */
#ifndef KILN_LIB_REQUIRED_FEATURES_H
#define KILN_LIB_REQUIRED_FEATURES_H

#include <stdbool.h>

#include "model.h"

/*
 * @return true if some input, weight or node result of `m` is f16 or bf16.
 * Node results are looked at only once kiln_model_infer has typed them
 * (value_types set).
 */
bool kiln_model_holds_half(const kiln_model *m);

/* @return true if `m` or one of its methods declares a relation across its dims. */
bool kiln_model_declares_relations(const kiln_model *m);

/* The required feature bits a writer sets for `m` (format.md §6). */
uint64_t kiln_model_required_features(const kiln_model *m);

#endif
