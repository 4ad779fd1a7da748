import StemdeckSession

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import StemdeckText
import StemdeckRemote
import StemdeckLive

/// The process's arguments (without the program name) as the kernel gave them. An argument that
/// is not valid UTF-8 keeps its bytes (RawFileName: each stray byte becomes its stand-in
/// character), so a file name typed in a shell names the same file here, and errors print it as
/// `\xNN`. Swift's `CommandLine.arguments` would turn such bytes into U+FFFD, naming no file.
public func commandLineArguments() -> [String] {
  (1..<Int(CommandLine.argc)).map { index in
    guard let argument = CommandLine.unsafeArgv[index] else { return "" }
    let bytes = UnsafeRawBufferPointer(start: argument, count: strlen(argument))
    return RawFileName.string(fromBytes: bytes)
  }
}
