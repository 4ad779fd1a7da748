import StemdeckControl
import StemdeckLive
import StemdeckText

// OSC addresses of plugin insert parameters: `/stemdeck/strip/NAME/insert/N/SYMBOL VALUE` sets
// control SYMBOL of insert N on strip NAME (a stem, bus, live input or `master`), through
// `insert set` (checked against the port's range, mix-level access); a string sets a file
// parameter (the plugin reads the file: files-level access, `--osc-allow all`).
// docs/remote-control.md.

extension OSCRequest {
  /// `/stemdeck/strip/NAME/insert/N/SYMBOL f` (a control), or `,s` (a file parameter).
  package func insertValue() -> Reply? {
    guard let n = Int(parts[3]), n >= 1 else {
      return (false, "\(path): the insert's position must be a whole number from 1 (got '\(parts[3])')")
    }
    if message.arguments.count == 1, case .string(let file) = message.arguments[0] {
      return run(["insert", "set", parts[1], String(n), parts[4], file])
    }
    switch number("the control's value") {
    case .failure(let r): return (false, r.text)
    case .success(let v):
      guard v.isFinite else { return (false, "\(path): the control's value must be finite") }
      return run(["insert", "set", parts[1], String(n), parts[4], NumberFormat.plain(v)])
    }
  }
}
