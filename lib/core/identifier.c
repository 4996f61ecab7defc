/* identifier.c — see identifier.h. */
#include "identifier.h"

bool kiln_is_identifier(const char *name)
{
    if (!name || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
                   name[0] == '_'))
        return false;
    for (const char *c = name + 1; *c; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                  *c == '_' || *c == '.' || *c == '-';
        if (!ok)
            return false;
    }
    return true;
}
