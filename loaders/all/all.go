package all

import (
	_ "github.com/itarconv/itarconv/loaders/dali"
	_ "github.com/itarconv/itarconv/loaders/energon"
	_ "github.com/itarconv/itarconv/loaders/ratarmount"
	_ "github.com/itarconv/itarconv/loaders/wids"
)
