" Vim syntax file for ShapeScript (.ss), for Vim and for Neovim before 0.9,
" whose LSP client has no semantic tokens (`ss lsp` colours by meaning
" where the editor asks it: docs/lsp.md). Tested against `ss`'s own lexer
" on every example (editors/tests/vim_syntax_check.sh).
" Install: put editors/vim on 'runtimepath' (set rtp+=/path/to/editors/vim).
if exists("b:current_syntax")
  finish
endif

" Keywords everywhere; declaration words only where the language makes
" them keywords: at column 0 of a top-level line, and `buffer` at the
" start of a model field (so `let data = data.take(10)` is ordinary code).
syn keyword ssKeyword fn let mut return if elif else for in while break
syn keyword ssKeyword continue and or not true false import
syn match ssDeclaration "^\%(devices\|mesh\|dim\|data\|model\|spmd\|extern\)\>"
syn match ssDeclaration "^\s\+\zsbuffer\ze\s\+\h\w*\s*:"

" Element types and host types (names to the lexer, types to a reader).
syn keyword ssType f32 f64 bf16 f16 i32 i64 bool int float str

" A fn's name where it is declared.
syn match ssFunction "\%(\<fn\s\+\)\@<=\h\w*"

" Numbers: 784, 1e-3, 0.5, .5, inf, nan; not the 0 of `0..C` as `0.`, nor
" the 1 of `w1`.
syn match ssNumber "\<\d\+\%(\.\%(\.\)\@!\d*\)\=\%([eE][-+]\=\d\+\)\="
syn match ssNumber "\%(\w\|\.\)\@<!\.\d\+\%([eE][-+]\=\d\+\)\="
syn keyword ssNumber inf nan

" Strings and f-strings, one line each; `{{` and `}}` are literal braces.
syn region ssString start=+"+ skip=+\\\\\|\\"+ end=+"+ oneline
syn region ssFString start=+\<[fF]"+ skip=+\\\\\|\\"+ end=+"+ oneline contains=ssInterp
syn match ssInterp "{[^{}]*}" contained
syn match ssInterp "{{\|}}" contained

syn match ssComment "#.*$" contains=ssTodo
syn keyword ssTodo TODO FIXME XXX NOTE contained

hi def link ssKeyword Keyword
hi def link ssDeclaration Statement
hi def link ssType Type
hi def link ssFunction Function
hi def link ssNumber Number
hi def link ssString String
hi def link ssFString String
hi def link ssInterp Special
hi def link ssComment Comment
hi def link ssTodo Todo

let b:current_syntax = "shapescript"
