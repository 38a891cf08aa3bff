package loaders

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// ErrSplit: the folds' names do not tell which split (train, val, test)
// each is, and no mapping (Splits) says it: a loader that keeps the
// splits apart (energon's split.yaml) cannot write the dataset without
// mixing them.
var ErrSplit = errors.New("the folds' names do not tell their splits")

// SplitParts are the split parts a fold can be in: energon's, those its
// loaders ask for (get_train_dataset "train", get_val_dataset "val").
var SplitParts = []string{"train", "val", "test"}

// A Fold is one fold of the dataset, as planned: its name, the split part
// it is in ("" until told) and its shards, in plan order.
type Fold struct {
	Name   string
	Split  string
	Shards []string
}

// A FoldLoader is a Loader whose files that span the dataset keep its
// folds apart (wids' index per fold, energon's split parts). The Set
// calls FoldOutputs and FinishFolds in place of Outputs and Finish, with
// the folds in plan order; with Splits true, each fold's Split is told
// (or the Set refuses the dataset with ErrSplit).
type FoldLoader interface {
	Loader
	Splits() bool
	FoldOutputs(folds []Fold) []string
	FinishFolds(ctx context.Context, folds []Fold) (written int, err error)
}

// splitWords are the words of a fold's name that tell its split part.
var splitWords = map[string]string{"train": "train", "val": "val", "validation": "val", "test": "test"}

// SplitOf is the split part a fold's name tells: the part of the one
// split word among its words (runs of letters, of any case: "imagenet-val"
// and "coco_train2017" tell val and train), or "" when it has none, or
// words of two parts ("trainval").
func SplitOf(fold string) string {
	part := ""
	for _, w := range strings.FieldsFunc(strings.ToLower(fold), func(r rune) bool { return !unicode.IsLetter(r) }) {
		p, ok := splitWords[w]
		if !ok {
			continue
		}
		if part != "" && part != p {
			return ""
		}
		part = p
	}
	return part
}

// AllFolds, as a fold's name in Splits, stands for every fold that the
// others do not name.
const AllFolds = "*"

// Splits map folds, by name, to split parts ("imagenet-val" -> "val"):
// the index command's --split FOLD=PART, repeated. It is a flag.Value.
type Splits map[string]string

// Set adds one FOLD=PART.
func (s *Splits) Set(v string) error {
	name, part, ok := strings.Cut(v, "=")
	name, part = strings.TrimSpace(name), strings.TrimSpace(part)
	if !ok || name == "" {
		return fmt.Errorf("%q: want FOLD=PART, such as imagenet-val=val", v)
	}
	if !slices.Contains(SplitParts, part) {
		return fmt.Errorf("%q: the split part %q is none of %s", v, part, strings.Join(SplitParts, ", "))
	}
	if *s == nil {
		*s = Splits{}
	}
	if had, dup := (*s)[name]; dup && had != part {
		return fmt.Errorf("%q: fold %s is in %s already", v, name, had)
	}
	(*s)[name] = part
	return nil
}

func (s *Splits) String() string {
	if s == nil || len(*s) == 0 {
		return ""
	}
	var pairs []string
	for k, v := range *s {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// Type names the flag's value in help.
func (*Splits) Type() string { return "FOLD=PART" }

// tell gives each fold its split part: the one the mapping gives it by
// name, else the one its name tells, else the mapping's AllFolds. A
// dataset of one fold the mapping does not name is all train, whatever
// its name, as energon prepare --split-ratio 1,0,0 puts it. Folds whose
// part nothing tells, or two folds whose names alone tell one part (two
// trains: which is which?), are ErrSplit, with the flags that would tell
// them.
func (s Splits) tell(folds []Fold) error {
	if len(folds) == 1 {
		if p, ok := s[folds[0].Name]; ok {
			folds[0].Split = p
		} else if p, ok := s[AllFolds]; ok {
			folds[0].Split = p
		} else {
			folds[0].Split = "train"
		}
		return nil
	}
	var why []string
	byPart := map[string][]string{} // folds told by their names alone
	for i := range folds {
		f := &folds[i]
		if p, ok := s[f.Name]; ok {
			f.Split = p
		} else if f.Split = SplitOf(f.Name); f.Split != "" {
			byPart[f.Split] = append(byPart[f.Split], foldName(f.Name))
		} else if p, ok := s[AllFolds]; ok {
			f.Split = p
		} else {
			why = append(why, foldName(f.Name)+" tells none")
		}
	}
	for _, part := range SplitParts {
		if names := byPart[part]; len(names) > 1 {
			why = append(why, fmt.Sprintf("%s all look like %s", strings.Join(names, ", "), part))
		}
	}
	if len(why) == 0 {
		return nil
	}
	example := make([]string, len(folds))
	for i, f := range folds {
		p := f.Split
		if p == "" {
			p = "PART"
		}
		example[i] = "--split " + shellWord(f.Name+"="+p)
	}
	return fmt.Errorf("%w (%s): give each fold's split part (%s) as %s, or --split '*=PART' for every fold not named",
		ErrSplit, strings.Join(why, "; "), strings.Join(SplitParts, ", "), strings.Join(example, " "))
}

func foldName(name string) string {
	if name == "" {
		return "a fold without a name"
	}
	return "fold " + name
}

// shellWord quotes s for a command line, where it needs quoting.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
