// The public header compiled as C++: extern "C" guards, no C-only syntax.
#include <kiln/kiln.h>
#include <kiln/text.h>
#include <kiln/util.h>

#include <cstdio>
#include <cstring>

int main()
{
    kiln_error err;
    kiln_builder *builder = nullptr;
    if (kiln_builder_new("cpp", &builder, &err) != KILN_OK) {
        std::fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    kiln_builder_free(builder);
    if (std::strcmp(kiln_dtype_name(KILN_F32), "f32") != 0)
        return 1;
    return std::strlen(kiln_strerror(KILN_ERR_SHAPE_GUARD)) > 0 ? 0 : 1;
}
