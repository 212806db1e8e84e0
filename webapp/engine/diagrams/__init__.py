"""Reading and checking a process diagram (no Flask here): the parser, safe XML, the BPMN
XSD, the checks SpiffWorkflow would not make, timers, expressions, elements in words, the verdict
and the problems, and the Hindi names held in the diagram."""
