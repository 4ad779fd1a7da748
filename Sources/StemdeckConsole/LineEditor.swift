import CEditLine
import Foundation
import StemdeckSession

/// Interactive line editing through libedit's readline interface, in its callback mode so the
/// main loop can keep serving engine events while the user types: events are printed above the
/// prompt and the line being typed is redrawn intact.
///
/// - Thread: the main (control) thread only. libedit's callbacks are C function pointers, so the
///   editor reaches its state through one documented global (`activeEditor`).
final class LineEditor {
  let prompt: String
  let historyPath: String
  /// Lines completed by libedit, waiting for the main loop.
  var pendingLines: [String?] = []
  /// Supplies completion candidates for (words before the cursor, the partial word).
  var completer: (([String], String) -> [String])?
  var candidates: [String] = []

  init(prompt: String, historyPath: String) {
    self.prompt = prompt
    self.historyPath = historyPath
    activeEditor = self
    stemdeck_rl_no_signals()
    using_history()
    _ = read_history(historyPath)
    stifle_history(2000)
    stemdeck_rl_set_completion(lineEditorComplete)
    rl_callback_handler_install(prompt, lineEditorHandleLine)
  }

  /// Feeds one character from the terminal to libedit (call when stdin is readable).
  func readCharacter() { rl_callback_read_char() }

  /// Prints `text` above the prompt without corrupting the line being typed.
  func printAbove(_ text: String) {
    // Clear the prompt line, print, then let libedit redraw prompt and current input.
    FileHandle.standardOutput.write(("\r\u{1B}[K" + text + "\n").data(using: .utf8)!)
    rl_forced_update_display()
  }

  /// Forgets the current input (after Ctrl-C).
  func cancelLine() {
    FileHandle.standardOutput.write("^C\n".data(using: .utf8)!)
    rl_replace_line("", 0)
    rl_forced_update_display()
  }

  func addHistory(_ line: String) {
    add_history(line)
    Self.saveHistory(to: historyPath)
  }

  func close() {
    rl_callback_handler_remove()
    Self.saveHistory(to: historyPath)
    activeEditor = nil
  }

  /// Writes libedit's history to `path`. libedit's `write_history` opens its path with
  /// `fopen(path, "w")`, which would follow a symbolic link planted at the history file and
  /// overwrite whatever it points to; so it writes into a private temporary folder and the result
  /// is renamed into place (a link there is replaced). A history that cannot be written is not
  /// worth interrupting the show for: the failure is ignored, as before.
  static func saveHistory(to path: String) {
    try? AtomicFile.replace(path, newMode: 0o600) { temporary in write_history(temporary) == 0 }
  }
}

/// The editor whose callbacks libedit calls. Touched only on the main thread.
nonisolated(unsafe) var activeEditor: LineEditor?

/// libedit's line callback: `line` is nil at end of input (Ctrl-D). libedit allocated it with malloc.
private func lineEditorHandleLine(_ line: UnsafeMutablePointer<CChar>?) {
  if let line {
    activeEditor?.pendingLines.append(String(cString: line))
    free(line)
  } else {
    activeEditor?.pendingLines.append(nil)
  }
}

/// libedit's attempted-completion callback: computes candidates for the word being completed.
private func lineEditorComplete(_ text: UnsafePointer<CChar>?, _ start: Int32, _ end: Int32) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
  guard let editor = activeEditor, let text else { return nil }
  let partial = String(cString: text)
  let buffer = String(cString: stemdeck_rl_line_buffer())
  let before = String(buffer.utf8.prefix(Int(start))) ?? ""
  let words = before.split(separator: " ").map(String.init)
  editor.candidates = editor.completer?(words, partial) ?? []
  stemdeck_rl_completion_over(1)  // no fallback to libedit's own file-name completion
  if editor.candidates.isEmpty { return nil }
  return rl_completion_matches(text, lineEditorGenerate)
}

/// libedit's generator: returns the `state`-th candidate as a malloc'ed string, then nil.
private func lineEditorGenerate(_ text: UnsafePointer<CChar>?, _ state: Int32) -> UnsafeMutablePointer<CChar>? {
  guard let editor = activeEditor, Int(state) < editor.candidates.count else { return nil }
  return strdup(editor.candidates[Int(state)])
}
