import Foundation
import PackagePlugin

/// Gives the StemdeckVersion module its version string: scripts/version writes it from the
/// VERSION file and git before every build (a prebuild command: git's state is not a file the
/// build could list as an input). The file is rewritten only when the version changed, so a build
/// with nothing new compiles nothing.
@main
struct StemdeckVersionPlugin: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
    let output = context.pluginWorkDirectoryURL.appending(path: "generated")
    let script = context.package.directoryURL.appending(path: "scripts/version")
    return [
      .prebuildCommand(
        displayName: "stemdeck version (VERSION and git)",
        executable: URL(fileURLWithPath: "/bin/sh"),
        arguments: [script.path, "--swift", output.path],
        outputFilesDirectory: output)
    ]
  }
}
