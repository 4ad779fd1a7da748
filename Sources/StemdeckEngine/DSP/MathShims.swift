#if canImport(Glibc)
import Glibc
#endif

@usableFromInline
func cosImpl(_ x: Double) -> Double { cos(x) }

@usableFromInline
func sinImpl(_ x: Double) -> Double { sin(x) }

@usableFromInline
func powImpl(_ x: Double, _ y: Double) -> Double { pow(x, y) }

@usableFromInline
func log2Impl(_ x: Double) -> Double { log2(x) }

@usableFromInline
func log10Impl(_ x: Double) -> Double { log10(x) }
