#ifndef STEMDECK_CNCURSES_SHIM_H
#define STEMDECK_CNCURSES_SHIM_H
/* ncursesw for the full-screen mixer view (Sources/StemdeckConsole/MixerView). Wide-character
   declarations on; the curses macros (stdscr, LINES, COLS, COLOR_PAIR, the A_ attributes) and
   the stdio globals are mutable C globals or function-like macros that Swift 6 will not touch,
   so these accessors keep every such use in one place (control thread only). */
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <stdio.h>
#include <ncursesw/curses.h>
#include <ncursesw/term.h>

/* A screen on the process's own terminal (stdout, stdin); NULL when TERM is unknown. */
static inline SCREEN *stemdeck_newterm(void) { return newterm(NULL, stdout, stdin); }
static inline WINDOW *stemdeck_stdscr(void) { return stdscr; }
static inline int stemdeck_lines(void) { return LINES; }
static inline int stemdeck_cols(void) { return COLS; }
static inline attr_t stemdeck_a_normal(void) { return A_NORMAL; }
static inline attr_t stemdeck_a_bold(void) { return A_BOLD; }
static inline attr_t stemdeck_a_reverse(void) { return A_REVERSE; }
static inline attr_t stemdeck_a_dim(void) { return A_DIM; }
static inline attr_t stemdeck_color_pair(int n) { return (attr_t)COLOR_PAIR(n); }
static inline int stemdeck_attrset(attr_t a) { return wattrset(stdscr, (int)a); }
/* Whether the terminal has an alternate screen (smcup): without one, the view clears the
   screen on its way out so that nothing of it is left above the prompt. */
static inline int stemdeck_has_alternate_screen(void) {
  const char *s = tigetstr("smcup");
  return s != NULL && s != (char *)-1 && s[0] != 0;
}
/* Mouse: the buttons the view asks for (a click, press or release of the first button, the
   wheel, and motion: reported while a button is held, in a drag), and which of them an event
   is: 1 the first button pressed, 2 released, 3 motion, 4 wheel up, 5 wheel down, 0 another. */
static inline mmask_t stemdeck_mouse_buttons(void) {
  return BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED
    | REPORT_MOUSE_POSITION;
}
static inline int stemdeck_mouse_kind(mmask_t b) {
  if (b & REPORT_MOUSE_POSITION) return 3;
  if (b & BUTTON1_RELEASED) return 2;
  if (b & (BUTTON1_PRESSED | BUTTON1_CLICKED)) return 1;
  if (b & BUTTON4_PRESSED) return 4;
  if (b & BUTTON5_PRESSED) return 5;
  return 0;
}
#endif
