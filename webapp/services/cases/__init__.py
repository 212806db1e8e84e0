"""Cases: opening one (case_start), its summary (cases), objections and appeals (claims),
deaths, escapes and births (animal_events), correcting a clerical mistake (corrections), moving
to another process version (migration), finding cases (search) and the case on one screen
(overview). Imports running, tasks and the packages below them."""
