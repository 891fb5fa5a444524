package tables

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxFileName bounds the bytes of a name FileName keeps (before its hash
// suffix and the extension): far under the 255 bytes file systems allow.
const MaxFileName = 100

// FileName is the one way a name from a run (an experiment, model,
// language, table or figure name: text from an experiment file, a
// dataset or a model) becomes a file name inside one folder, without its
// extension. Letters of any script with their combining marks, digits,
// '-', '_' and '.' are kept; everything else (path separators, spaces,
// quotes, <, >, control characters) becomes '_', a run of them one '_'
// ("../../x" → "_x"); a dot is kept only after a letter, digit, mark or
// '-' and before more of the name, so the result is never "..", never
// hidden and never climbs out of its folder;
// a name Windows reserves (CON, NUL, COM1, …) gets a leading '_'; and it
// keeps at most MaxFileName bytes. A name it had to change gets '-' and
// 8 hex digits of the SHA-256 of the original, so two names that
// sanitise alike ("a/b", "a:b") keep distinct files; a name it keeps is
// returned as it is ("accuracy", "conditions_tiny-1b", "हिन्दी").
func FileName(name string) string {
	var sb strings.Builder
	prev := rune(0) // the last rune written
	for i, r := range name {
		keep := r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
		if r == '.' { // only between a name's characters: never "..", never leading or trailing
			keep = prev != 0 && prev != '.' && prev != '_' && i+1 < len(name)
		}
		if !keep {
			if prev == '_' {
				continue // a run of replaced characters is one '_'
			}
			r = '_'
		}
		sb.WriteRune(r)
		prev = r
	}
	s := cmp.Or(sb.String(), "_")
	if reservedName(s) {
		s = "_" + s
	}
	if len(s) > MaxFileName {
		cut := MaxFileName
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
		if strings.HasSuffix(s, ".") {
			s = s[:len(s)-1] + "_"
		}
	}
	if s == name {
		return s
	}
	h := sha256.Sum256([]byte(name))
	return s + "-" + hex.EncodeToString(h[:4])
}

// reservedName says whether Windows reserves s as a device name (CON,
// PRN, AUX, NUL, COM0–9, LPT0–9), alone or before an extension.
func reservedName(s string) bool {
	base, _, _ := strings.Cut(strings.ToUpper(s), ".")
	switch base {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	return len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) && base[3] >= '0' && base[3] <= '9'
}

// FileNames hands out the file names of one folder: each is FileName's,
// and one that another name already took in the folder (compared without
// case, as macOS and Windows compare them: "Tiny" and "tiny") gets a
// counter ("-2", "-3", …) until it is free. The zero value is
// ready to use.
type FileNames struct{ used map[string]bool }

// Name is the folder's file name for name (without its extension).
func (u *FileNames) Name(name string) string {
	if u.used == nil {
		u.used = map[string]bool{}
	}
	base := FileName(name)
	s := base
	for i := 2; u.used[strings.ToLower(s)]; i++ {
		s = base + "-" + strconv.Itoa(i)
	}
	u.used[strings.ToLower(s)] = true
	return s
}
