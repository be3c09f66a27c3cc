#!/bin/sh
# Regenerates the built-in voice-chat prompts (builtin:voice): five short
# spoken questions, 16 kHz mono 16-bit WAV, synthesised with Debian's
# espeak-ng and resampled with sox. The output is committed, so a build needs
# neither tool; run this only to change the questions.
#
#   apt-get install -y espeak-ng sox && sh scenarios/prompts/voice/generate.sh
#
# The output is reproducible for one espeak-ng and sox version (espeak-ng is
# a deterministic formant synthesiser; sox's resampler is deterministic);
# the versions used for the committed files are in VERSIONS.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
while IFS= read -r question; do
	[ -n "$question" ] || continue
	n=$((n + 1))
	out=$(printf 'q%02d.wav' "$n")
	# -v en-us: American English voice; -s 160: words per minute.
	espeak-ng -v en-us -s 160 -w "$tmp/raw.wav" "$question"
	# 16 kHz mono s16le, what speech front ends (and the realtime API) take;
	# -D: no dither, so the output does not depend on a random generator.
	sox "$tmp/raw.wav" -D -r 16000 -c 1 -b 16 -e signed-integer "$out"
	printf '%s\t%s\n' "$out" "$question"
done < questions.txt > transcripts.tsv

{
	espeak-ng --version
	sox --version
} > VERSIONS
