import CEditLine
import Foundation
import StemdeckSession
import StemdeckRemote
import StemdeckLive

/// Interactive line editing through libedit's readline interface, in its callback mode so the
/// main loop can keep serving engine events while the user types: events are printed above the
/// prompt and the line being typed is redrawn intact.
///
/// libedit's callback mode leaves the terminal in the kernel's canonical mode once it has
/// delivered a line (double echo, raw `^[[A`, no completion on the next line), so the handler is
/// installed again for every line: `start()` before reading one, `suspend()` while a command runs
/// (the terminal is then in its normal mode, and output goes straight to it).
///
/// - Thread: the main (control) thread only. libedit's callbacks are C function pointers, so the
///   editor reaches its state through one documented global (`activeEditor`).
final class LineEditor {
  let prompt: String
  let historyPath: String
  /// Lines completed by libedit, waiting for the main loop (nil: Ctrl-D on an empty line).
  var pendingLines: [String?] = []
  /// Supplies completion candidates for (words before the cursor, the partial word).
  var completer: (([String], String) -> [String])?
  var candidates: [String] = []
  /// Whether libedit owns the terminal (raw mode, prompt shown) and reads a line.
  private(set) var active = false

  /// `historySize`: lines kept (the configuration's `history`).
  init(prompt: String, historyPath: String, historySize: Int = 2000) {
    self.prompt = prompt
    self.historyPath = historyPath
    activeEditor = self
    stemdeck_rl_no_signals()
    stemdeck_rl_install_getc()  // before libedit initializes (read_history may do it)
    using_history()
    _ = read_history(historyPath)
    stifle_history(Int32(historySize))
    stemdeck_rl_set_completion(lineEditorComplete)
  }

  /// Shows the prompt and lets libedit read a line (raw mode, its keys, completion).
  func start() {
    guard !active else { return }
    active = true
    rl_callback_handler_install(prompt, lineEditorHandleLine)
  }

  /// Gives the terminal back to its normal mode (while a command runs, or at the end).
  func suspend() {
    guard active else { return }
    active = false
    rl_callback_handler_remove()
  }

  /// Feeds the characters waiting on the terminal to libedit (call when stdin is readable).
  func readCharacter() {
    rl_callback_read_char()
    // Enter that ends a Ctrl-R search is given back to libedit's input queue, to be read with
    // the next key: the line would run only on a second Enter (which then also ran an empty
    // line). Let libedit read what it queued now, without waiting for the terminal.
    let last = stemdeck_rl_last_character()
    if pendingLines.isEmpty && (last == 10 || last == 13) {
      stemdeck_rl_set_nonblocking(1)
      rl_callback_read_char()
      stemdeck_rl_set_nonblocking(0)
    }
    // A line (or Ctrl-D) was delivered: libedit has put the terminal back in its normal mode.
    if !pendingLines.isEmpty { active = false }
  }

  /// Tells libedit the terminal changed size (SIGWINCH), so it wraps the line right.
  func resize() {
    if active { rl_resize_terminal() }
  }

  /// Prints `text` above the prompt without corrupting the line being typed: the prompt and
  /// input (possibly wrapped over several rows) are cleared, the text printed, and libedit
  /// redraws the prompt and input with the cursor where it was.
  func printAbove(_ text: String) {
    guard active else {
      Output.write(text + "\n")
      return
    }
    stemdeck_rl_flush()  // whatever libedit still buffers goes first
    let columns = TerminalInfo.columns()
    let buffer = String(cString: stemdeck_rl_line_buffer())
    let point = Int(stemdeck_rl_point())
    let beforeCursor = String(decoding: buffer.utf8.prefix(max(0, point)), as: UTF8.self)
    let cursorColumn = TerminalInfo.displayWidth(prompt) + TerminalInfo.displayWidth(beforeCursor)
    let row = columns > 0 ? cursorColumn / columns : 0
    var frame = "\r"
    if row > 0 { frame += "\u{1B}[\(row)A" }
    frame += "\u{1B}[J" + text + "\n"
    Output.write(frame)
    rl_forced_update_display()
    stemdeck_rl_flush()
  }

  /// Forgets the current input (after Ctrl-C) and shows a fresh prompt.
  func cancelLine() {
    guard active else { return }
    stemdeck_rl_flush()
    Output.write("^C\n")
    // libedit's rl_replace_line("") does nothing (it returns early on empty text); installing
    // the handler again starts an empty line with a fresh prompt.
    suspend()
    start()
    stemdeck_rl_flush()
  }

  /// Adds `line` to the history and writes the history file. Returns a warning the first time
  /// the file cannot be written (a read-only or full state folder), nil otherwise: said once,
  /// not at every line.
  func addHistory(_ line: String) -> String? {
    add_history(line)
    guard let problem = Self.saveHistory(to: historyPath), !historyProblemTold else { return nil }
    historyProblemTold = true
    return "the command history cannot be kept (\(problem)); this is said once"
  }

  /// Whether `addHistory` has told the user the history cannot be written.
  private var historyProblemTold = false

  func close() {
    suspend()
    stemdeck_rl_flush()
    Self.saveHistory(to: historyPath)
    activeEditor = nil
  }

  /// Writes libedit's history to `path`. libedit's `write_history` opens its path with
  /// `fopen(path, "w")`, which would follow a symbolic link planted at the history file and
  /// overwrite whatever it points to; so it writes into a private temporary folder and the result
  /// is renamed into place (a link there is replaced). A history that cannot be written is not
  /// worth interrupting the show for: the failure is returned (`addHistory` says it once).
  @discardableResult
  ///
  /// libedit ignores the error of its final `fclose`, so on a full disk `write_history` succeeds
  /// with a short file: renamed into place, that emptied the history. The file is counted
  /// first: a header line and one line per entry, or it is not used.
  static func saveHistory(to path: String) -> String? {
    do {
      try AtomicFile.replace(path, newMode: 0o600) { temporary in
        guard write_history(temporary) == 0 else { return false }
        if lineCount(temporary) == Int(stemdeck_history_length()) + 1 { return true }
        // Short: one more byte written by hand fails with the real reason (ENOSPC, EDQUOT…),
        // which errno then carries into the error.
        let fd = open(temporary, O_WRONLY | O_APPEND | O_CLOEXEC)
        if fd >= 0 {
          if write(fd, "\n", 1) == 1 && fsync(fd) == 0 { errno = EIO }
          Glibc.close(fd)
        }
        return false
      }
    } catch { return "\(error)" }
    return nil
  }

  /// The number of newlines in the file at `path` (-1 if it cannot be read). Leaves errno as a
  /// failed write set it when the file reads fine.
  static func lineCount(_ path: String) -> Int {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return -1 }
    defer { Glibc.close(fd) }
    var buffer = [UInt8](repeating: 0, count: 65536)
    var lines = 0
    while true {
      let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if got < 0 { return -1 }
      if got == 0 { return lines }
      for i in 0..<got where buffer[i] == 0x0A { lines += 1 }
    }
  }
}

/// The editor whose callbacks libedit calls. Touched only on the main thread.
nonisolated(unsafe) var activeEditor: LineEditor?

/// libedit's line callback: `line` is nil at end of input (Ctrl-D). libedit allocated it with malloc.
private func lineEditorHandleLine(_ line: UnsafeMutablePointer<CChar>?) {
  if let line {
    activeEditor?.pendingLines.append(String(decoding: UnsafeRawBufferPointer(start: line, count: strlen(line)), as: UTF8.self))
    free(line)
  } else {
    activeEditor?.pendingLines.append(nil)
  }
}

/// libedit's attempted-completion callback: computes candidates for the word being completed.
///
/// libedit splits words at spaces only, so for `add my\ lo` or `add "my lo` the `text` it
/// replaces is the part after the last space; the word as the tokenizer reads it starts earlier
/// (`CompletionWord`). Candidates are computed for the whole word, quoted or escaped the way it
/// was typed, and handed to libedit as replacements of its shorter `text`.
private func lineEditorComplete(
  _ text: UnsafePointer<CChar>?, _ start: Int32, _ end: Int32
) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
  guard let editor = activeEditor, let text else { return nil }
  stemdeck_rl_completion_over(1)  // no fallback to libedit's own file-name completion
  // libedit's start and end count characters (it edits wide characters), not bytes.
  let scalars = Array(String(cString: stemdeck_rl_line_buffer()).unicodeScalars)
  let cursor = min(scalars.count, max(0, Int(end)))
  let wordStart = min(cursor, max(0, Int(start)))
  var before = String.UnicodeScalarView()
  before.append(contentsOf: scalars[..<cursor])
  let word = CompletionWord(lineBeforeCursor: String(before))
  let raw = editor.completer?(word.previousWords, word.unquoted) ?? []
  // libedit replaces the last `cursor - wordStart` characters of what was typed; the rest of
  // the typed word stays, so each candidate must start with it.
  let typed = Array(word.typed.unicodeScalars)
  let keep = max(0, typed.count - (cursor - wordStart))
  editor.candidates = raw.compactMap { candidate in
    let rendered = Array(word.render(candidate).unicodeScalars)
    guard rendered.count >= keep, Array(rendered.prefix(keep)) == Array(typed.prefix(keep)) else { return nil }
    var tail = String.UnicodeScalarView()
    tail.append(contentsOf: rendered.dropFirst(keep))
    return String(tail)
  }
  // A lone folder gets no space after it (so Tab goes on into it); anything else does.
  let folder = raw.count == 1 && raw[0].hasSuffix("/")
  stemdeck_rl_set_append_character(folder ? 0 : 32)
  if editor.candidates.isEmpty { return nil }
  return rl_completion_matches(text, lineEditorGenerate)
}

/// libedit's generator: returns the `state`-th candidate as a malloc'ed string, then nil.
private func lineEditorGenerate(_ text: UnsafePointer<CChar>?, _ state: Int32) -> UnsafeMutablePointer<CChar>? {
  guard let editor = activeEditor, Int(state) < editor.candidates.count else { return nil }
  return strdup(editor.candidates[Int(state)])
}
