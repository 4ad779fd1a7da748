#ifndef STEMDECK_CEDITLINE_SHIM_H
#define STEMDECK_CEDITLINE_SHIM_H
#include <stdio.h>
#include <wchar.h>
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
static inline void stemdeck_rl_no_signals(void) { rl_catch_signals = 0; }
static inline void stemdeck_rl_completion_over(int over) { rl_attempted_completion_over = over; }
/* What libedit inserts after a single completion: ' ', or nothing (0) after a folder. */
static inline void stemdeck_rl_set_append_character(int c) { rl_completion_append_character = c; }
/* Sends what libedit buffered in its output stream to the terminal (before stemdeck writes there
   itself with write(2)). Errors (a terminal gone) are stemdeck's to notice elsewhere. */
static inline void stemdeck_rl_flush(void) { fflush(rl_outstream ? rl_outstream : stdout); }
/* Columns a character takes on the terminal (-1: not printable), in the current LC_CTYPE. */
static inline int stemdeck_wcwidth(unsigned int c) { return wcwidth((wchar_t)c); }
#endif
