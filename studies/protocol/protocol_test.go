package protocol

import (
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
