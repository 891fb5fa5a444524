package records

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// Line seals.
//
// Every line the Writer writes ends with the member
//
//	,"record_sha256":"<64 hex digits>"}
//
// where the digest is the SHA-256 of the line up to that member followed by
// "}" (the record as it would read without it). A line edited by hand, and
// not resealed, no longer matches: ScanDir and ReadUnique name it. Lines
// at the start of a file without such a member were written before records
// were sealed (a run resumed by a newer Bhasha) and are accepted; an
// unsealed line after a sealed one is flagged (its seal was removed, or it
// was added by hand).
const sealMember = `,"record_sha256":"`

// unsealedWhy explains the flag on an unsealed line among sealed ones.
const unsealedWhy = "has no record_sha256 while the records before it do (its seal was removed, or it was added by hand)"

// sealLen is the length of the seal member with its digest and the closing
// `"}` of the record.
const sealLen = len(sealMember) + 64 + 2

// seal appends the seal member to the record at the end of buf, which starts
// at offset start and ends in "}\n".
func seal(buf *bytes.Buffer, start int) {
	b := buf.Bytes()[start:]
	h := sha256.New()
	h.Write(b[:len(b)-2]) // without "}\n"
	h.Write([]byte{'}'})
	var sum [32]byte
	h.Sum(sum[:0])
	buf.Truncate(buf.Len() - 2)
	buf.WriteString(sealMember)
	var hx [64]byte
	hex.Encode(hx[:], sum[:])
	buf.Write(hx[:])
	buf.WriteString("\"}\n")
}

// sealState says whether a line carries a seal and whether it matches.
type sealState int

const (
	unsealed sealState = iota
	sealOK
	sealBroken
)

// checkSeal verifies one line (without its newline).
func checkSeal(line []byte) sealState {
	line = bytes.TrimRight(line, "\r")
	n := len(line)
	if n < sealLen+1 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return unsealed
	}
	at := n - sealLen
	if !bytes.Equal(line[at:at+len(sealMember)], []byte(sealMember)) {
		return unsealed
	}
	want := line[at+len(sealMember) : n-2]
	h := sha256.New()
	h.Write(line[:at])
	h.Write([]byte{'}'})
	var sum [32]byte
	h.Sum(sum[:0])
	var hx [64]byte
	hex.Encode(hx[:], sum[:])
	if bytes.Equal(hx[:], want) {
		return sealOK
	}
	return sealBroken
}

// Tally counts records and names the first line they were found on.
type Tally struct {
	N     int // records
	First int // 1-based line of the first
}

// Conflict is a key answered by more than one ok record that disagree: a
// directory two runs wrote into, or a record planted by hand. Neither is
// trusted.
type Conflict struct {
	Key       string
	Lines     []int    // 1-based, in file order
	Responses []string // the response of each line, same order
}

func (c Conflict) String() string {
	var parts []string
	for i, l := range c.Lines {
		parts = append(parts, fmt.Sprintf("line %d answers %s", l, quoteShort(c.Responses[i])))
	}
	return fmt.Sprintf("key %s: %s", c.Key, strings.Join(parts, ", "))
}

// Flag is one line that cannot be trusted as written, and why.
type Flag struct {
	Line int
	Key  string
	Why  string
}

func (f Flag) String() string { return fmt.Sprintf("line %d (key %s): %s", f.Line, f.Key, f.Why) }

// Scan is what a records file holds, read without changing it. Commit
// applies the repairs it found (and any archiving the caller decides).
type Scan struct {
	Path   string
	Done   *KeySet       // keys with an ok record (the first of each), with their request digests
	Report PrepareReport // repairs Commit would make: torn tail, failed records, identical duplicates
	Lines  int           // complete lines read

	// Experiments counts the records of each experiment named by the keys
	// (a run directory holds one).
	Experiments map[string]Tally
	// Foreign lists the records of experiments other than the one ScanDir
	// was given; they are not in Done.
	Foreign []Flag
	// Identities counts, per model of the keys (Key.Model), the ok records
	// of each identity that answered them (the zero Identity: records
	// written before records named it).
	Identities map[string]map[engine.Identity]Tally
	Simulated  int // ok records that say a simulator answered them

	Conflicts []Conflict // keys with disagreeing ok records
	Edited    []Flag     // sealed lines whose seal does not match, unsealed lines among sealed ones
	Sealed    int        // lines with a matching seal
	Unsealed  int        // lines without a seal before the first sealed one (older Bhasha)

	conflictKeys map[[2]uint64]bool
	torn         bool
	committed    bool // Commit rewrote the file: the line numbers above are of the file before
}

// ScanDir reads dir/records.jsonl without writing anything: the keys already
// answered, the repairs a resume would make, what experiments, identities
// and simulators the records name, conflicting duplicates and edited lines.
// Records whose key names an experiment other than experiment (when it is
// not "") are listed in Foreign and left out of everything else. A missing
// file is an empty scan. A malformed line that is not the last is an error
// naming the file, line and field.
func ScanDir(dir, experiment string) (*Scan, error) {
	path := filepath.Join(dir, FileName)
	s := &Scan{Path: path, Done: NewKeySet(), Report: PrepareReport{Path: path},
		Experiments: map[string]Tally{}, Identities: map[string]map[engine.Identity]Tally{}, conflictKeys: map[[2]uint64]bool{}}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening records: %w", err)
	}
	defer f.Close()
	var dups []dupLine
	br := bufio.NewReaderSize(f, 1<<20)
	lineNo := 0
	for {
		line, rerr := br.ReadBytes('\n')
		if len(line) == 0 && rerr == io.EOF {
			break
		}
		if rerr != nil && rerr != io.EOF {
			return nil, fmt.Errorf("reading %s: %w", path, rerr)
		}
		lineNo++
		complete := rerr == nil
		var rec struct {
			Key       *string          `json:"key"`
			Status    *string          `json:"status"`
			Digest    string           `json:"request_sha256"`
			Request   json.RawMessage  `json:"request"`
			Response  string           `json:"response"`
			Identity  *engine.Identity `json:"identity"`
			Simulated bool             `json:"simulated"`
		}
		perr := json.Unmarshal(line, &rec)
		if perr == nil {
			switch {
			case rec.Key == nil:
				perr = errors.New(`field "key" is missing`)
			case rec.Status == nil:
				perr = errors.New(`field "status" is missing`)
			case *rec.Status != engine.StatusOK && *rec.Status != engine.StatusFailed:
				perr = fmt.Errorf(`field "status": %q is neither "ok" nor "failed"`, *rec.Status)
			}
		}
		if !complete || perr != nil {
			if rerr == io.EOF { // the last line: a torn tail from a killed run
				s.torn = true
				s.Report.TornTail = true
				s.Report.TornTailBytes = int64(len(line))
				break
			}
			return nil, fmt.Errorf("%s line %d: %v", path, lineNo, perr)
		}
		s.Lines = lineNo
		key := *rec.Key
		switch checkSeal(bytes.TrimSuffix(line, []byte("\n"))) {
		case sealOK:
			s.Sealed++
		case sealBroken:
			s.Edited = append(s.Edited, Flag{Line: lineNo, Key: key, Why: "edited after it was written (its record_sha256 does not match the line)"})
		default:
			if s.Sealed+len(s.Edited) > 0 {
				s.Edited = append(s.Edited, Flag{Line: lineNo, Key: key, Why: unsealedWhy})
			} else {
				s.Unsealed++ // written before records were sealed
			}
		}
		exp := keyField(key, 0)
		t := s.Experiments[exp]
		if t.N == 0 {
			t.First = lineNo
		}
		t.N++
		s.Experiments[exp] = t
		if experiment != "" && exp != experiment {
			s.Foreign = append(s.Foreign, Flag{Line: lineNo, Key: key, Why: fmt.Sprintf("a record of experiment %q", exp)})
			continue
		}
		if *rec.Status != engine.StatusOK {
			s.Report.DroppedFailed++
			continue
		}
		digest := rec.Digest
		if digest == "" && len(rec.Request) > 0 {
			// The body is there and says what was asked: a removed digest
			// does not hide a changed request.
			digest = engine.RequestDigest(rec.Request)
		} else if digest != "" && len(rec.Request) > 0 && engine.RequestDigest(rec.Request) != digest {
			s.Edited = append(s.Edited, Flag{Line: lineNo, Key: key, Why: "its request does not match its request_sha256"})
		}
		model := keyField(key, 1)
		var id engine.Identity
		if rec.Identity != nil {
			id = *rec.Identity
		}
		ids := s.Identities[model]
		if ids == nil {
			ids = map[engine.Identity]Tally{}
			s.Identities[model] = ids
		}
		it := ids[id]
		if it.N == 0 {
			it.First = lineNo
		}
		it.N++
		ids[id] = it
		if rec.Simulated {
			s.Simulated++
		}
		resp := maphash.String(s.Done.seed1, rec.Response)
		if first, ok := s.Done.addLine(key, digest, resp, lineNo); !ok {
			if first.resp == resp {
				s.Report.DroppedDup++
			} else {
				s.conflictKeys[s.Done.h(key)] = true
				dups = append(dups, dupLine{key: key, first: int(first.line), line: lineNo, response: rec.Response})
			}
			continue
		}
		s.Report.Kept++
		if rerr == io.EOF {
			break
		}
	}
	if len(dups) > 0 {
		if err := s.collectConflicts(f, dups); err != nil {
			return nil, err
		}
	}
	s.Done.dropResponses()
	return s, nil
}

// dupLine is an ok record whose key was answered before, differently.
type dupLine struct {
	key         string
	first, line int // the key's first ok line, and this one
	response    string
}

// collectConflicts groups disagreeing duplicates by key and reads the
// responses of their first lines.
func (s *Scan) collectConflicts(f *os.File, dups []dupLine) error {
	want := map[int]bool{}
	for _, d := range dups {
		want[d.first] = true
	}
	firsts, err := responsesAt(f, s.Path, want)
	if err != nil {
		return err
	}
	at := map[string]int{}
	for _, d := range dups {
		i, ok := at[d.key]
		if !ok {
			i = len(s.Conflicts)
			at[d.key] = i
			s.Conflicts = append(s.Conflicts, Conflict{Key: d.key, Lines: []int{d.first}, Responses: []string{firsts[d.first]}})
		}
		s.Conflicts[i].Lines = append(s.Conflicts[i].Lines, d.line)
		s.Conflicts[i].Responses = append(s.Conflicts[i].Responses, d.response)
	}
	return nil
}

// responsesAt reads the response of the given lines of f.
func responsesAt(f *os.File, path string, want map[int]bool) (map[int]string, error) {
	out := map[int]string{}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	br := bufio.NewReaderSize(f, 1<<20)
	for n := 1; len(out) < len(want); n++ {
		line, err := br.ReadBytes('\n')
		if want[n] {
			var rec struct {
				Response string `json:"response"`
			}
			if jerr := json.Unmarshal(line, &rec); jerr != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, n, jerr)
			}
			out[n] = rec.Response
		}
		if err != nil {
			break
		}
	}
	return out, nil
}

// Others says, for every experiment other than name that the keys name,
// how many records and the first line ("" when there is none).
func (s *Scan) Others(name string) string {
	var out []string
	for _, e := range slices.Sorted(maps.Keys(s.Experiments)) {
		if e == name {
			continue
		}
		t := s.Experiments[e]
		out = append(out, fmt.Sprintf("%d record(s) of experiment %q (first at line %d)", t.N, e, t.First))
	}
	return strings.Join(out, ", ")
}

// IsConflict reports whether key has disagreeing ok records.
func (s *Scan) IsConflict(key string) bool { return s.conflictKeys[s.Done.h(key)] }

// Pick chooses lines to move to the archive at Commit: given a line's
// number, key and the identity that answered it (nil when the record does
// not say).
type Pick func(line int, key string, id *engine.Identity) bool

// Commit rewrites the records file as a resume needs it: without a torn
// tail, failed records and identical duplicates (the first record of a
// key stays), and with the lines pick chooses moved to
// dir/archive/<name>.jsonl first (the archive holds them before the records
// file loses them: a crash in between leaves them in both, never in
// neither). The keys of archived lines leave s.Done. It returns the
// archive's path and how many lines moved; a file that needs nothing is
// not touched. Once it has rewritten the file, a later Commit without
// archiving does nothing (the repairs are made).
func (s *Scan) Commit(pick Pick, name string) (string, int, error) {
	need := s.torn || s.Report.DroppedFailed > 0 || s.Report.DroppedDup > 0 || pick != nil
	if s.committed {
		// The repairs are made and the line numbers are the old file's:
		// a second pass would take a kept record for a duplicate.
		if pick != nil {
			return "", 0, errors.New("records: Scan.Commit called twice with lines to archive (scan again)")
		}
		return "", 0, nil
	}
	if !need {
		return "", 0, nil
	}
	f, err := os.Open(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("opening records: %w", err)
	}
	defer f.Close()
	var keep []int64
	var archived bytes.Buffer
	var archivedKeys []string
	moved := 0
	br := bufio.NewReaderSize(f, 1<<20)
	var off int64
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if len(line) == 0 || (rerr == io.EOF && s.torn) {
			break
		}
		if rerr != nil && rerr != io.EOF {
			return "", 0, fmt.Errorf("reading %s: %w", s.Path, rerr)
		}
		start := off
		off += int64(len(line))
		var rec struct {
			Key      string           `json:"key"`
			Status   string           `json:"status"`
			Identity *engine.Identity `json:"identity"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return "", 0, fmt.Errorf("%s line %d: %w", s.Path, n, err)
		}
		switch {
		case pick != nil && pick(n, rec.Key, rec.Identity):
			moved++
			archived.Write(line)
			if line[len(line)-1] != '\n' {
				archived.WriteByte('\n')
			}
			archivedKeys = append(archivedKeys, rec.Key)
		case rec.Status != engine.StatusOK:
		case !s.Done.Has(rec.Key):
			keep = append(keep, start, off) // a foreign record, left for the caller to decide
		case s.Done.lineOf(rec.Key) != n && !s.IsConflict(rec.Key):
			// an identical duplicate: the first stays
		default:
			keep = append(keep, start, off)
		}
		if rerr == io.EOF {
			break
		}
	}
	apath := ""
	if moved > 0 {
		if err := os.MkdirAll(filepath.Join(filepath.Dir(s.Path), ArchiveDir), 0o755); err != nil {
			return "", 0, fmt.Errorf("archiving records: %w", err)
		}
		apath = filepath.Join(filepath.Dir(s.Path), ArchiveDir, name+".jsonl")
		if err := noLink(apath); err != nil {
			return "", 0, err
		}
		af, err := os.OpenFile(apath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return "", 0, fmt.Errorf("archiving records: %w", err)
		}
		if _, err := af.Write(archived.Bytes()); err != nil {
			af.Close()
			return "", 0, fmt.Errorf("writing %s: %w", apath, err)
		}
		if err := af.Sync(); err != nil {
			af.Close()
			return "", 0, fmt.Errorf("writing %s: %w", apath, err)
		}
		if err := af.Close(); err != nil {
			return "", 0, fmt.Errorf("writing %s: %w", apath, err)
		}
	}
	if err := rewrite(f, s.Path, keep); err != nil {
		return "", 0, err
	}
	s.Report.RewroteFile = true
	s.committed = true
	for _, k := range archivedKeys {
		s.Done.Remove(k)
	}
	s.Report.Kept = s.Done.Len()
	return apath, moved, nil
}

// keyField is the i-th '|'-separated field of a key string, unescaped.
func keyField(key string, i int) string {
	for range i {
		_, rest, ok := strings.Cut(key, "|")
		if !ok {
			return ""
		}
		key = rest
	}
	f, _, _ := strings.Cut(key, "|")
	if strings.Contains(f, "%") {
		f = strings.NewReplacer("%7C", "|", "%25", "%").Replace(f)
	}
	return f
}

// quoteShort quotes s, cut to 80 characters.
func quoteShort(s string) string {
	r := []rune(s)
	if len(r) > 80 {
		return fmt.Sprintf("%q… (%d characters)", string(r[:80]), len(r))
	}
	return fmt.Sprintf("%q", s)
}

// ConflictError names every key with disagreeing ok records, with each
// line and its response, or is nil.
func (s *Scan) ConflictError() error {
	if len(s.Conflicts) == 0 {
		return nil
	}
	var parts []string
	for i, c := range s.Conflicts {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more key(s)", len(s.Conflicts)-5))
			break
		}
		parts = append(parts, c.String())
	}
	return fmt.Errorf("%s: %d key(s) have ok records that disagree, and neither is trusted: %s", s.Path, len(s.Conflicts), strings.Join(parts, "; "))
}

// EditedError names the lines that are not as they were written, or is nil.
func (s *Scan) EditedError() error {
	if len(s.Edited) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %d record(s) are not as Bhasha wrote them: %s", s.Path, len(s.Edited), FlagList(s.Edited, 5))
}

// FlagList joins the first n flags and says how many more there are.
func FlagList(fs []Flag, n int) string {
	var parts []string
	for i, f := range fs {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(fs)-n))
			break
		}
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}
