package bench

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Result decodes the result of an `itarconv --json` run (docs/JSON.md:
// {command, ok, result, error}) into v; a failed run is its error message.
func Result(doc []byte, v any) error {
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(doc, &env); err != nil {
		return fmt.Errorf("reading its JSON: %v", err)
	}
	if !env.OK {
		if env.Error != nil {
			return errors.New(env.Error.Message)
		}
		return errors.New("the run failed")
	}
	return json.Unmarshal(env.Result, v)
}
