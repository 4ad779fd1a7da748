// The executable's entry point: it only hands argv to StemdeckConsole's runStemdeck, where the
// parts are put together (App.swift: runLive, runRender). See docs/architecture.md.
import Foundation
import StemdeckConsole

exit(runStemdeck(commandLineArguments()))
