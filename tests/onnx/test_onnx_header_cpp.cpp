// <kiln/onnx.h> compiled as C++: extern "C" guards, no C-only syntax.
#include <kiln/onnx.h>

int main()
{
    kiln_onnx_options options;
    kiln_onnx_options_default(&options);
    kiln_onnx_result_free(nullptr);
    kiln_onnx_model_free(nullptr);
    return options.struct_size == sizeof options && kiln_onnx_result_unsupported_count(nullptr) == 0 ? 0 : 1;
}
