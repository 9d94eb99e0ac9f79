#!/bin/zsh -f
# Prints the completions real zsh offers for a command line, one per line: zsh -f zsh-capture.zsh SCRIPT 'meshgate ch'
# An interactive zsh runs in a pseudo-terminal (zsh/zpty) with compinit and SCRIPT loaded; compadd is wrapped to
# print each match it is given, and the line is completed by binding complete-word between two markers. This is
# how zsh itself would complete at a prompt, without a person at the keyboard. The terminal echoes what is typed, so
# markers are split by quotes ("RE""ADY") where typed: only the shell's output contains them whole.
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z 'PROMPT= RPROMPT=; unsetopt zle_bracketed_paste 2>/dev/null'
zpty -w z "autoload -U compinit; compinit -u -d ${(q)TMPDIR:-/tmp}/meshgate-zcompdump-$$"
zpty -w z "source ${(q)1}"
zpty -w z 'compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  typeset -a __hits
  builtin compadd -A __hits "$@"
  local h; for h in $__hits; do print -r -- "MA""TCH:$h"; done
}'
zpty -w z 'comp-begin () { print -n "<<BEG""IN>>"; zle -I; }; zle -N comp-begin'
zpty -w z 'comp-end () { print -n "<<EN""D>>"; }; zle -N comp-end'
zpty -w z 'bindkey "^X1" comp-begin; bindkey "^X2" complete-word; bindkey "^X3" comp-end; print RE""ADY'
zpty -r z line '*READY*'
zpty -n -w z "$2"$'\C-x1\C-x2\C-x3'
out=''
integer tries=0
# Up to 10 s (200 × 50 ms): zsh answers in milliseconds; the bound only keeps a broken run from hanging.
while [[ $out != *'<<END>>'* ]] && (( tries++ < 200 )); do
  if zpty -r -t z chunk; then out+=$chunk; else sleep 0.05; fi
done
zpty -d z
rm -f ${TMPDIR:-/tmp}/meshgate-zcompdump-$$
[[ $out == *'<<END>>'* ]] || { print -u2 "no completion within 10 s"; exit 4; }
for l in ${(f)out//$'\r'/}; do [[ $l == *MATCH:* ]] && print -r -- ${l##*MATCH:}; done
exit 0
