package httpitl

import (
	"fmt"
	"slices"
)

// rec is a fake recorder with Generation's rules: the last id and model win, a negative count
// leaves the previous one, finish reasons accumulate, every chunk counts.
type rec struct {
	id, model string
	in, out   int
	reasons   []string
	chunks    int
}

func newRec() *rec { return &rec{in: -1, out: -1} }

func (r *rec) Chunk(int)                 { r.chunks++ }
func (r *rec) SetResponseID(id string)   { r.id = id }
func (r *rec) SetResponseModel(m string) { r.model = m }
func (r *rec) AddFinishReason(s string)  { r.reasons = append(r.reasons, s) }
func (r *rec) SetUsage(in, out int) {
	if in >= 0 {
		r.in = in
	}
	if out >= 0 {
		r.out = out
	}
}

func (r *rec) equal(s *rec) bool {
	return r.id == s.id && r.model == s.model && r.in == s.in && r.out == s.out && r.chunks == s.chunks && slices.Equal(r.reasons, s.reasons)
}

func (r *rec) String() string {
	return fmt.Sprintf("{id %q model %q usage %d/%d reasons %q chunks %d}", r.id, r.model, r.in, r.out, r.reasons, r.chunks)
}
