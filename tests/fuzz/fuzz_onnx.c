/*
 * fuzz_onnx.c — the ONNX reader and importer on arbitrary bytes, read both
 * as a ModelProto and as a TensorProto (the test data files). External
 * data is refused (no directory is given), so no input makes the target
 * read the file system. A model that imports is also sealed and loaded
 * back: the importer must never build a program the loader refuses.
 * run.sh lets inputs grow to 200 KB (libFuzzer's default is 4 KB), room for
 * the thousands of nested subgraphs that once overflowed protobuf-c's
 * recursive unpack (crashers/onnx-nested-if-3000).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <kiln/kiln.h>

#include "onnx_import.h"
#include "onnx_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void import_model(const uint8_t *data, size_t size)
{
    Onnx__ModelProto *model;
    if (onnx_model_decode(data, size, NULL, &model, NULL) != KILN_OK)
        return;
    /*
     * Bounds for the names the seeds and crashers use, so that their imports
     * go all the way. A dim that names no size of the model is an error:
     * then try each alone, then none.
     */
    const kiln_onnx_dim both[] = {{"batch", 1, 4, 0}, {"N", 1, 4, 0}};
    const kiln_onnx_dim *const tries[] = {both, &both[0], &both[1], NULL};
    const uint32_t counts[] = {2, 1, 1, 0};
    kiln_onnx_options options = {.dims = both, .dim_count = 2};
    kiln_onnx_result result;
    kiln_status status = KILN_ERR_INVALID_ARGUMENT;
    for (int t = 0; t < 4 && status == KILN_ERR_INVALID_ARGUMENT; t++) {
        if (t)
            onnx_result_release(&result);
        options.dims = tries[t];
        options.dim_count = counts[t];
        status = onnx_import_model(model, "fuzz", &options, &result, NULL);
    }
    if (status == KILN_OK) {
        void *bytes = NULL;
        size_t length = 0;
        if (kiln_builder_encode(result.builder, NULL, &bytes, &length, NULL) == KILN_OK) {
            kiln_program *program = NULL;
            kiln_status loaded = kiln_program_load_memory(bytes, length, NULL, &program, NULL, NULL);
            /* Metadata copied from the model may exceed the reader's default string limit. */
            if (loaded != KILN_OK && loaded != KILN_ERR_LIMIT)
                abort();
            kiln_program_free(program);
            free(bytes);
        }
    }
    onnx_result_release(&result);
    onnx__model_proto__free_unpacked(model, NULL);
}

static void read_tensor(const uint8_t *data, size_t size)
{
    Onnx__TensorProto *tensor = onnx__tensor_proto__unpack(NULL, size, data);
    if (!tensor)
        return;
    kiln_tensor *out = NULL;
    if (onnx_tensor_to_kiln(tensor, NULL, NULL, &out, NULL) == KILN_OK)
        kiln_tensor_free(out);
    onnx__tensor_proto__free_unpacked(tensor, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    import_model(data, size);
    read_tensor(data, size);
    return 0;
}
