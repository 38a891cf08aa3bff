package energon

import "testing"

// TestAnalyzeScalarStyles pins the styles analyzeScalar allows for inputs
// that exercise each PyYAML rule (indicators first and later in the
// string, leading and trailing spaces and breaks, space-break pairs,
// characters outside printable ASCII), so that splitting it keeps every
// decision.
func TestAnalyzeScalarStyles(t *testing.T) {
	type want struct{ flow, block, single, multi bool }
	cases := []struct {
		in string
		want
	}{
		{"plain", want{true, true, true, false}},
		{"---x", want{false, false, true, false}},
		{"...", want{false, false, true, false}},
		{"#c", want{false, false, true, false}},
		{"&a", want{false, false, true, false}},
		{"?", want{false, false, true, false}},
		{"?x", want{false, true, true, false}},
		{":x", want{false, true, true, false}},
		{": x", want{false, false, true, false}},
		{"- x", want{false, false, true, false}},
		{"-x", want{true, true, true, false}},
		{"a,b", want{false, true, true, false}},
		{"a:b", want{false, true, true, false}},
		{"a: b", want{false, false, true, false}},
		{"a:", want{false, false, true, false}},
		{"a #b", want{false, false, true, false}},
		{"a#b", want{true, true, true, false}},
		{" a", want{false, false, true, false}},
		{"a ", want{false, false, true, false}},
		{"a\nb", want{false, false, true, true}},
		{"\na", want{false, false, true, true}},
		{"a\n", want{false, false, true, true}},
		{"a\n b", want{false, false, false, true}},
		{"a \nb", want{false, false, false, true}},
		{"a\tb", want{false, false, false, false}},
		{"é", want{false, false, false, false}},
		{"a\u2028b", want{false, false, false, true}},
		{"x", want{true, true, true, false}},
		{"-", want{false, false, true, false}},
	}
	for _, c := range cases {
		a := analyzeScalar([]rune(c.in))
		got := want{a.allowFlowPlain, a.allowBlockPlain, a.allowSingleQuoted, a.multiline}
		if got != c.want || a.length != len([]rune(c.in)) || a.empty {
			t.Errorf("analyzeScalar(%q) = %+v (len %d, empty %v), want %+v", c.in, got, a.length, a.empty, c.want)
		}
	}
	if a := analyzeScalar(nil); !a.empty || a.allowFlowPlain || !a.allowBlockPlain || !a.allowSingleQuoted {
		t.Errorf("analyzeScalar(empty) = %+v", a)
	}
}
