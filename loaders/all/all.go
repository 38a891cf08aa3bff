// Package all registers every loader's plug-in with package loaders: a
// program that writes or checks other loaders' indexes imports it for its
// side effects, as image/png is imported for image.Decode.
package all

import (
	_ "github.com/itarconv/itarconv/loaders/dali"
	_ "github.com/itarconv/itarconv/loaders/energon"
	_ "github.com/itarconv/itarconv/loaders/ratarmount"
	_ "github.com/itarconv/itarconv/loaders/wids"
)
