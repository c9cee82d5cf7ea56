#!/bin/sh
# Remakes the screenshots of README.md and docs/ with the app's own --screenshot, on a virtual display.
# usage: docs/screenshots/make.sh [path/to/kvscope]   (default: build/gui/kvscope)
# Times in them (the Time panel, lesson 8's plot) are measured on the machine that runs this.
set -eu
app=${1:-build/gui/kvscope}
out=$(dirname "$0")
shot() {
    name=$1
    shift
    xvfb-run -a -s "-screen 0 1920x1080x24" "$app" --backend cpu --screenshot "$out/$name.png" "$@"
    # Lossless recompression where optipng is installed (about 30% smaller than stb's PNGs).
    if command -v optipng >/dev/null; then optipng -quiet -o2 "$out/$name.png"; fi
    echo "$out/$name.png"
}
shot toy --model toy --decode 1
shot default-prefill --model default --prompt "Once upon a time" --prefill
shot default-decode20 --model default --prompt "Once upon a time" --decode 20
shot default-compare --model default --prompt "Once upon a time" --cache compare --decode 20
shot lesson-1-step-3 --lesson 1 --lesson-step 3 --size 1600x900
shot lesson-5-step-2-zh --lesson 5 --lesson-step 2 --lang zh --size 1600x900
shot lesson-8-step-1 --lesson 8 --lesson-step 1 --size 1600x900
# At a projector's 1920x1080: compare mode, the lessons that set the stage (lesson 8: the sweep and
# the batch's KV caches side by side; lesson 2's last step: its own prefill on a roofline), the
# toy's numbers and its ten next tokens.
shot stage-compare-1080 --model default --prompt "Once upon a time" --cache compare --decode 20 --size 1920x1080
shot stage-lesson-8-step-1-1080 --lesson 8 --lesson-step 1 --size 1920x1080
shot stage-lesson-9-1080 --lesson 9 --lesson-step 1 --size 1920x1080
shot stage-lesson-2-roofline-1080 --lesson 2 --lesson-step 6 --size 1920x1080
shot stage-toy-numbers-1080 --model toy --decode 1 --size 1920x1080
# Inside attention (I, or a click on a heatmap row): the toy's head "even" at "so" (prefill) and
# head "all" at the decode step; the default model's layer 1, head 0 at "is" (prefill, "France"
# takes the weight) and at a decode step with the op strip walked to an op of layer 1.
shot explain-toy-prefill --model toy --prefill --explain 0,0,4 --size 1600x900
shot explain-toy-decode --model toy --decode 1 --explain 0,3,last --size 1600x900
shot explain-default-prefill --model default --prompt "The capital of France is" --prefill \
    --explain 1,0,last --size 1600x900
shot explain-default-decode --model default --prompt "The capital of France is" --decode 3 \
    --explain 1,0,last --ops --op 24 --size 1600x1080
# Compare mode: every row the uncached step recomputed is outlined, and the line says so.
shot compare-recomputed --model default --prompt "The capital of France is" --cache compare \
    --decode 4 --size 1600x900
# A Hugging Face folder: stories260K (8 query heads, 4 K/V heads: GQA) written by
# `kvscope-cli export --hf` as BF16, where ../shared has the model; the heads grouped by K/V head.
cli=$(dirname "$app")/../cli/kvscope-cli
hf=$(mktemp -d)
if "$cli" export --model stories260K --hf "$hf/stories260K-hf" --type bf16 >/dev/null 2>&1; then
    shot hf-stories260K-gqa-1080 --model "$hf/stories260K-hf" --prompt "Once upon a time" \
        --decode 12 --size 1920x1080
fi
rm -rf "$hf"
# A GPT-2-shaped model: `kvscope-cli make-model --arch gpt2` (random weights, one GGUF
# of architecture gpt2), the op strip at layer 1's GELU: LayerNorm, the bias adds, no RoPE.
g=$(mktemp -d)
"$cli" make-model --arch gpt2 --shape small --seq-len 256 --out "$g/gpt2-small.gguf" >/dev/null
shot gpt2-small-1080 --model "$g/gpt2-small.gguf" --prompt "Once upon a time" --decode 12 \
    --ops --op 41 --size 1920x1080
rm -rf "$g"
# The stage a room reads (docs/window.md): the row of Inside attention built stage by stage at a
# projector's 1920x1080 (the prefill's q and K rows, its scores under the causal mask beside the
# whole [T, T] triangle, the softmax weights), Inside attention shown alone at text 2 (key 8), causal
# and bidirectional side by side (key M), and the memory traffic of each step against the position
# in the time panel shown alone (key 4).
shot stage-row-1-1080 --model default --prompt "The capital of France is" --prefill \
    --explain 1,0,4 --maximise inside --explain-stage 8 --font-scale 1.5 --size 1920x1080
shot stage-row-4-1080 --model default --prompt "The capital of France is" --prefill \
    --explain 1,0,4 --maximise inside --explain-stage 11 --font-scale 1.5 --size 1920x1080
shot stage-row-5-1080 --model default --prompt "The capital of France is" --prefill \
    --explain 1,0,4 --maximise inside --explain-stage 12 --font-scale 1.5 --size 1920x1080
shot presenter-inside-1080 --model default --prompt "Once upon a time" --decode 3 \
    --explain 1,0,last --maximise inside --font-scale 2 --size 1920x1080
# Where q, k and v come from (the first seven stages): at 1920x1080 text 2, x·W_q beside the
# head's W_q rows and RoPE's turn; at 1280x800 text 1 in Chinese the norm, and at text 2 the K/V
# row written to the cache; Inside attention alone (key 8) at text 1 after the prefill and three
# decode steps, its numbers grown to the window.
shot proj-wq-1080-text2 --model default --prompt "The capital of France is" --decode 3 \
    --explain 1,0,last --explain-stage 3 --font-scale 2 --size 1920x1080
shot proj-rope-1080-text2 --model default --prompt "The capital of France is" --decode 3 \
    --explain 1,0,last --maximise inside --explain-stage 6 --font-scale 2 --size 1920x1080
shot proj-norm-1280-zh --model default --prompt "The capital of France is" --decode 3 \
    --explain 1,0,last --explain-stage 2 --lang zh --size 1280x800
shot proj-cache-1280-text2 --model default --prompt "The capital of France is" --decode 3 \
    --explain 1,0,last --explain-stage 7 --font-scale 2 --size 1280x800
shot presenter-inside-fill-1080 --model default --prompt "The capital of France is" --decode 3 \
    --explain 1,0,last --maximise inside --size 1920x1080
# Every weight the model gave: the bidirectional row's matrix has the keys after the query too;
# every row the why-not-Q count names opens (the query at position 3 at step 3, without the cache).
shot inside-bidirectional-1080 --model default --prompt "Today's weather is so" --prefill \
    --cache bidirectional --explain 1,0,3,1 --maximise inside --explain-stage 12 --font-scale 2 \
    --size 1920x1080
shot inside-uncached-row-1080 --model default --prompt "Once upon a time" --decode 3 --cache off \
    --explain 3,0,3 --maximise inside --explain-stage 11 --font-scale 2 --size 1920x1080
shot causal-vs-bidirectional-1080 --model default --prompt "Once upon a time" --decode 3 \
    --cache bidirectional --size 1920x1080
# Lesson 10: the causal and bidirectional sessions side by side after one token more, the measured
# max |dK| of each above its heatmap; and its first step in Chinese at text 2 (the triangle beside
# the square, the question revealed).
shot lesson-10-step-2-1080 --lesson 10 --lesson-step 2 --size 1920x1080
shot lesson-10-step-1-zh-text2-1080 --lesson 10 --lesson-step 1 --lang zh --font-scale 2 \
    --size 1920x1080
shot memory-traffic-1080 --model default --prompt "Once upon a time" --decode 60 --cache compare \
    --maximise time --size 1920x1080
# The same panel for a Q8_0 file: the weights a step reads as the file keeps them (kvscope-cli info's
# figure), at text 2.
q=$(mktemp -d)
"$cli" export --type q8_0 --gguf "$q/default-q8_0.gguf" >/dev/null
shot memory-traffic-q8_0-1080 --model "$q/default-q8_0.gguf" --prompt "Once upon a time" --decode 20 \
    --maximise time --font-scale 2 --size 1920x1080
rm -rf "$q"
# Sampling, stage by stage (the Next token panel alone, key 5): the prefill's draw at temperature
# 2 and top-k 5 ("The capital of France is": " Paris" from 99.8% at temperature 1 to 64% at 2, 95%
# after top-k), in English at text 2 and in Chinese at a laptop's size.
shot sampling-stages-1080 --model default --prompt "The capital of France is" --prefill \
    --temperature 2 --top-k 5 --top-p 1 --maximise next --font-scale 2 --size 1920x1080
shot sampling-stages-zh-1280x800 --model default --prompt "The capital of France is" --prefill \
    --temperature 2 --top-k 5 --top-p 1 --maximise next --lang zh --size 1280x800
# The map of the step (key Y): a decode step with the cache (its one query per layer) and one
# without it (every earlier query needed below the last layer, the recomputed rows measured).
shot step-map-1080 --model default --prompt "The capital of France is" --decode 1 --maximise map \
    --font-scale 2 --size 1920x1080
shot step-map-uncached-zh-1280x800 --model default --prompt "The capital of France is" --decode 1 \
    --cache off --maximise map --lang zh --size 1280x800
# The Serving view (key V): the built-in eight prompts after 19 scheduler steps (the second four
# requests running on the shared prefix blocks, the first four finished).
shot serving-1080 --serve-steps 19 --size 1920x1080
