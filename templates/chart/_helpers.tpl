[[ header_tpl ]]
[[ helpers ]]
[[ guard ]]
