/*
 * replay.c — runs a fuzz target over files without libFuzzer, so that the
 * committed corpus and every crasher are replayed by `meson test` in every
 * build (plain and sanitized).
 *
 * Usage: replay DIR_OR_FILE...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    uint8_t *data = NULL;
    size_t size = 0, capacity = 0;
    for (;;) {
        if (size == capacity) {
            capacity = capacity ? capacity * 2 : 4096;
            uint8_t *grown = realloc(data, capacity);
            if (!grown) {
                fclose(f);
                free(data);
                return 1;
            }
            data = grown;
        }
        size_t n = fread(data + size, 1, capacity - size, f);
        if (n == 0)
            break;
        size += n;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int replay_path(const char *path, unsigned *count)
{
    struct stat info;
    if (stat(path, &info) != 0) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(info.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    DIR *dir = opendir(path);
    if (!dir) {
        perror(path);
        return 1;
    }
    int failures = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        if (entry->d_name[0] == '.')
            continue;
        size_t length = strlen(path) + strlen(entry->d_name) + 2;
        char *child = malloc(length);
        if (!child) {
            closedir(dir);
            return 1;
        }
        snprintf(child, length, "%s/%s", path, entry->d_name);
        failures += replay_path(child, count);
        free(child);
    }
    closedir(dir);
    return failures;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    int failures = 0;
    for (int i = 1; i < argc; i++)
        failures += replay_path(argv[i], &count);
    printf("replayed %u inputs\n", count);
    return failures ? 1 : 0;
}
