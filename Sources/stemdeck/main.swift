// The composition root: everything lives in StemdeckConsole; this only hands over argv.
import Foundation
import StemdeckConsole

exit(runStemdeck(Array(CommandLine.arguments.dropFirst())))
