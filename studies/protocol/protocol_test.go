package protocol

import (
	"io/fs"
	"sort"
	"strings"
	"testing"
)

func TestTemplates(t *testing.T) {
	names := TemplateNames()
	if len(names) < 10 {
		t.Fatalf("templates %v", names)
	}
	for _, n := range names {
		text, hash, err := Template(n)
		if err != nil || text == "" || len(hash) != 64 {
			t.Errorf("%s: %v", n, err)
		}
	}
	one, _, _ := Template("indicklar/1step-cm.txt")
	if !strings.HasSuffix(one, "script>\"\n}\n\n\n") || !strings.Contains(one, "STEP 1 \u2014 CODE-MIXED") {
		t.Errorf("1Step-CM template ends %q", one[len(one)-20:])
	}
}

// TemplateNames lists every embedded template, sorted.
func TemplateNames() []string {
	var out []string
	fs.WalkDir(templateFS, "templates", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".txt") {
			out = append(out, strings.TrimPrefix(p, "templates/"))
		}
		return nil
	})
	sort.Strings(out)
	return out
}
