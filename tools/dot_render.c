/* dot_render.c — see dot_render.h. */
#include "dot_render.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

bool dot_render_find(char *out, size_t size)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t length = strcspn(path, ":");
        struct stat st;
        /* An empty PATH entry means the current directory. */
        int n = snprintf(out, size, "%.*s/dot", (int)length, length ? path : ".");
        if (n > 0 && (size_t)n < size && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return true;
        path += length + (path[length] == ':');
    }
    return false;
}

bool dot_render(const char *dot_program, const char *format, const char *path, const char *text, size_t size)
{
    char type[32];
    int pipe_fds[2];
    snprintf(type, sizeof type, "-T%s", format);
    if (pipe(pipe_fds) != 0) {
        cli_error("cannot run %s: %s", dot_program, strerror(errno));
        return false;
    }
    pid_t child = fork();
    if (child < 0) {
        cli_error("cannot run %s: %s", dot_program, strerror(errno));
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return false;
    }
    if (child == 0) {
        dup2(pipe_fds[0], STDIN_FILENO);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        execl(dot_program, "dot", type, "-o", path, (char *)NULL);
        _exit(127);
    }
    close(pipe_fds[0]);
    /* A dot that exits early must not kill us with SIGPIPE: its status says why. */
    void (*previous)(int) = signal(SIGPIPE, SIG_IGN);
    size_t written = 0;
    while (written < size) {
        ssize_t n = write(pipe_fds[1], text + written, size - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        written += (size_t)n;
    }
    close(pipe_fds[1]);
    signal(SIGPIPE, previous);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        cli_error("%s -T%s -o %s failed (%s %d)", dot_program, format, path,
                  WIFEXITED(status) ? "exit status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return false;
    }
    return true;
}
