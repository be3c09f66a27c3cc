package simulator

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// replyCorpus holds what the simulated assistant says: a chat reply reads
// like an answer, not an echo of the prompt. The sentences are joined in a
// ring, so any number of words can be taken from any starting point.
func replyCorpus() []string {
	return []string{
		"Sure, I can help with that.",
		"Here is a short answer to your question.",
		"The main idea is simple once you see the pieces together.",
		"First, start with the part you already know works.",
		"Then change one thing at a time and check the result.",
		"That way you can tell which step made the difference.",
		"If anything is still unclear, just ask me again.",
		"I hope this makes your day a little easier.",
		"Thanks for asking, it is a good question.",
		"Let me know if you would like more detail on any step.",
		"In short, the answer is yes, with a few caveats.",
		"Most people find the second approach easier to follow.",
	}
}

// replyWords returns n words of the corpus, starting at a sentence chosen
// from seed and the prompt, so a run is reproducible and different prompts
// get different replies. The reply has as many words as the user's text, so
// the text timing model (words x WordInterval) is unchanged.
func replyWords(seed int64, prompt string, n int) []string {
	if n <= 0 {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte(strconv.FormatInt(seed, 10)))
	h.Write([]byte{0})
	h.Write([]byte(prompt))
	corpus := replyCorpus()
	var ring []string
	for _, s := range corpus {
		ring = append(ring, strings.Fields(s)...)
	}
	// Start at a sentence boundary: find the word index of the chosen sentence.
	start, pick := 0, int(h.Sum64()%uint64(len(corpus)))
	for _, s := range corpus[:pick] {
		start += len(strings.Fields(s))
	}
	out := make([]string, n)
	for i := range out {
		out[i] = ring[(start+i)%len(ring)]
	}
	return out
}
