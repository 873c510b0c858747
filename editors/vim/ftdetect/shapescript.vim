" ShapeScript files (.ss).
autocmd BufRead,BufNewFile *.ss setfiletype shapescript
