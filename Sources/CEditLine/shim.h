#ifndef STEMDECK_CEDITLINE_SHIM_H
#define STEMDECK_CEDITLINE_SHIM_H
#include <stdio.h>
#include <wchar.h>
#include <errno.h>
#include <poll.h>
#include <unistd.h>
#include <editline/readline.h>

/* libedit's readline globals are mutable C globals, which Swift 6 will not touch directly;
   these accessors keep every such access in one place (control thread only). */
static inline void stemdeck_rl_set_completion(rl_completion_func_t *f) {
  rl_attempted_completion_function = f;
  rl_completion_append_character = ' ';
  rl_completer_word_break_characters = (char *)" \t";
}
static inline const char *stemdeck_rl_line_buffer(void) { return rl_line_buffer ? rl_line_buffer : ""; }
static inline int stemdeck_rl_point(void) { return rl_point; }
static inline int stemdeck_history_length(void) { return history_length; }
static inline void stemdeck_rl_no_signals(void) { rl_catch_signals = 0; }
static inline void stemdeck_rl_completion_over(int over) { rl_attempted_completion_over = over; }
/* What libedit inserts after a single completion: ' ', or nothing (0) after a folder. */
static inline void stemdeck_rl_set_append_character(int c) { rl_completion_append_character = c; }
/* Sends what libedit buffered in its output stream to the terminal (before stemdeck writes there
   itself with write(2)). Errors (a terminal gone) are stemdeck's to notice elsewhere. */
static inline void stemdeck_rl_flush(void) { fflush(rl_outstream ? rl_outstream : stdout); }
/* stemdeck reads the terminal for libedit (rl_getc_function, installed before libedit starts):
   one UTF-8 character per call, returned as its code point (libedit's readline layer takes the
   value as one wide character). stemdeck_getc_last is the last character read;
   with stemdeck_getc_nonblocking set, a call with nothing to read returns EOF at once instead
   of waiting. Control thread only.
   The two variables are weak definitions, not `static`: a header's static variable is one copy
   per object file that uses it, and the optimizer inlines Swift callers across files, so the
   getc installed from one file and the reader in another saw different copies (Enter after
   Ctrl-R was lost in release builds only). Weak definitions are merged into one by the linker. */
__attribute__((weak)) int stemdeck_getc_last = -1;
__attribute__((weak)) int stemdeck_getc_nonblocking = 0;
static inline int stemdeck_read_byte(int fd, int wait) {
  unsigned char c;
  for (;;) {
    if (!wait) {
      struct pollfd p = { fd, POLLIN, 0 };
      if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) return EOF;
    }
    ssize_t n = read(fd, &c, 1);
    if (n == 1) return c;
    if (n < 0 && errno == EINTR) continue;
    return EOF;
  }
}
static inline int stemdeck_getc(FILE *f) {
  int fd = fileno(f);
  int c = stemdeck_read_byte(fd, !stemdeck_getc_nonblocking);
  if (c == EOF) return EOF;
  int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  int code = more == 3 ? (c & 0x07) : more == 2 ? (c & 0x0F) : more == 1 ? (c & 0x1F) : c;
  for (int i = 0; i < more; i++) {
    int next = stemdeck_read_byte(fd, 1);
    if (next == EOF || (next & 0xC0) != 0x80) { code = 0xFFFD; break; }
    code = (code << 6) | (next & 0x3F);
  }
  stemdeck_getc_last = code;
  return code;
}
static inline void stemdeck_rl_install_getc(void) { rl_getc_function = stemdeck_getc; }
static inline int stemdeck_rl_last_character(void) { return stemdeck_getc_last; }
static inline void stemdeck_rl_set_nonblocking(int on) { stemdeck_getc_nonblocking = on; stemdeck_getc_last = -1; }
/* Columns a character takes on the terminal (-1: not printable), in the current LC_CTYPE. */
static inline int stemdeck_wcwidth(unsigned int c) { return wcwidth((wchar_t)c); }
#endif
