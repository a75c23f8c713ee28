// Pps.g4 - the grammar of the pps schedule language.
//
// One language, two layers: pipeline declarations with explicit per-rank
// action lists (the lowered layer, also the textual IR) and programmable
// schedules (`schedule`/`fn` with let, for, if, rank blocks).
// The C++ parser is generated at build time with
//   antlr4 -Dlanguage=Cpp -no-listener -no-visitor
// and turned into our AST by compiler/frontend/Transform*.cpp.
grammar Pps;

file : topDecl* EOF ;

topDecl
  : importDecl
  | scheduleDecl
  | fnDecl
  | pipelineDecl
  ;

// import std.interleaved;   import "../common/helpers.pps";
importDecl : IMPORT modulePath SEMI ;
modulePath : ident (DOT ident)* | STRING ;

scheduleDecl : SCHEDULE ident LPAREN paramList? RPAREN block ;
fnDecl : FN ident LPAREN paramList? RPAREN block ;
paramList : param (COMMA param)* COMMA? ;
param : binder (ASSIGN expr)? ;

// ---------------------------------------------------------------------------
// Pipeline declarations
// ---------------------------------------------------------------------------
pipelineDecl : PIPELINE ident LBRACE pipelineItem* RBRACE ;

pipelineItem
  : RANKS expr SEMI                                  # ranksItem
  | STAGES expr (PLACEMENT placementSpec)? SEMI      # stagesItem
  | MICROBATCHES expr SEMI                           # microbatchesItem
  | DIRECTIONS expr SEMI                             # directionsItem
  | COST LBRACE costEntry* RBRACE                    # costItem
  | COMM LBRACE commEntry* RBRACE                    # commItem
  | MEMORY LIMIT expr unit? SEMI                     # memoryItem
  | MEMORY LBRACE memoryEntry* RBRACE                # memoryBlockItem
  | FSDP (PREFETCH expr)? SEMI                       # fsdpItem
  | SCHEDULE ident LPAREN argList? RPAREN SEMI       # scheduleItem
  | LET binder ASSIGN expr SEMI                      # letItem
  | RANK expr COLON action* SEMI                     # rankListItem
  | RANK expr block                                  # rankBlockItem
  ;

// loop | v | { 0 -> 0, 1 -> 1, ... }
placementSpec
  : ident                                            # namedPlacement
  | LBRACE stageMapping (COMMA stageMapping)* COMMA? RBRACE  # explicitPlacement
  ;
stageMapping : expr ARROW expr ;

// F = 1.0;  F[stage 7] = 1.4;  overlap = 2.5;
costEntry : costKey (LBRACK STAGE_KW expr RBRACK)? ASSIGN quantity SEMI ;
costKey : COMPUTE_KIND | OVERLAP | ident ;

// The memory model: what F allocates and I frees, per (microbatch, stage);
// W (or the last backward) frees the rest.
//   memory { F = 1; I = -0.5; W = -0.5; limit 8; }
//   memory { F[stage 0] = 48 MiB; F[stage 1] = 40 MiB; limit 2 GiB; }
memoryEntry
  : LIMIT expr unit? SEMI                            # memoryLimitEntry
  | costKey (LBRACK STAGE_KW expr RBRACK)? ASSIGN quantity SEMI # memoryAmountEntry
  ;

// model eager; latency 0.05 ms; bandwidth 50 GB/s; activation 64 MiB; blocking;
// stream rank; eager threshold 64 KiB;
commEntry
  : ident commWord? quantity SEMI                    # commValue
  | ident commWord? SEMI                             # commFlag
  ;
// `rank` is a keyword, and a stream scope.
commWord : ident | RANK ;
quantity : MINUS? number unit? ;
// `B` lexes as COMPUTE_KIND, so units accept it ("64 B", "B/ms").
unit : unitName (SLASH unitName)? ;
unitName : ident | COMPUTE_KIND ;
number : INT | FLOAT ;

// ---------------------------------------------------------------------------
// Statements (bodies of schedule, fn, rank blocks)
// ---------------------------------------------------------------------------
block : LBRACE stmt* RBRACE ;

stmt
  : LET binder ASSIGN expr SEMI                      # letStmt
  | ident ASSIGN expr SEMI                           # assignStmt
  | ident LBRACK expr RBRACK ASSIGN expr SEMI        # indexAssignStmt
  // Common slips from other languages, parsed so that the error can say
  // what to write instead: `i += 1;` and `i++;` (see TransformStmt.cpp).
  | ident op=(PLUS | MINUS | STAR | SLASH | PERCENT) ASSIGN expr SEMI # compoundAssignStmt
  | ident op=(PLUS | MINUS) (PLUS | MINUS) SEMI      # incrementStmt
  | FOR binder IN expr DOTDOT expr (STEP expr)? block # forStmt
  | WHILE expr block                                 # whileStmt
  | BREAK SEMI                                       # breakStmt
  | CONTINUE SEMI                                    # continueStmt
  | ifChain                                          # ifStmt
  | RANK expr block                                  # rankStmt
  | RANK expr COLON action* SEMI                     # rankListStmt
  | RETURN expr? SEMI                                # returnStmt
  | ASSERT expr (COMMA STRING)? SEMI                 # assertStmt
  | ident LPAREN argList? RPAREN SEMI                # callStmt
  | action+ SEMI                                     # actionStmt
  | SEMI                                             # emptyStmt
  ;

ifChain : IF expr block (ELSE (block | ifChain))? ;

// ---------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------
action
  : computeRef                                       # computeAction
  | OVERLAP LPAREN computeRef COMMA computeRef RPAREN # overlapAction
  | SEND computeRef (ARROW primary)?                 # sendAction
  | RECV computeRef (LARROW primary)?                # recvAction
  | controlKind primary                              # controlAction
  | IDLE (LPAREN quantity RPAREN)?                   # idleAction
  ;
controlKind : UNSHARD | RESHARD | REDUCE_GRAD ;

// F3, F3@5, F3@(s+1), F(i), F(i)@s
computeRef
  : COMPUTE_LIT (AT primary)?                        # literalRef
  | COMPUTE_KIND LPAREN expr RPAREN (AT primary)?    # exprRef
  ;

// ---------------------------------------------------------------------------
// Expressions: 64-bit integers, booleans and integer arrays
// (array(n, init), len(a), a[i], a[i] = v) for greedy constructions
// ---------------------------------------------------------------------------
expr
  : primary                                          # primaryExpr
  | op=(MINUS | BANG) expr                           # unaryExpr
  | expr op=(STAR | SLASH | PERCENT) expr            # mulExpr
  | expr op=(PLUS | MINUS) expr                      # addExpr
  | expr op=(LT | LE | GT | GE) expr                 # cmpExpr
  | expr op=(EQEQ | NE) expr                         # eqExpr
  | expr ANDAND expr                                 # andExpr
  | expr OROR expr                                   # orExpr
  ;

primary
  : INT                                              # intLit
  | (TRUE | FALSE)                                   # boolLit
  | ident LPAREN argList? RPAREN                     # callExpr
  | ident LBRACK expr RBRACK                         # indexExpr
  | ident                                            # nameExpr
  | LPAREN expr RPAREN                               # parenExpr
  ;

argList : arg (COMMA arg)* COMMA? ;
arg : (ident COLON)? expr ;

// A name being bound (let, for, parameter). Reserved action names are
// accepted here so sema can say why they cannot be used.
binder : ident | COMPUTE_KIND | COMPUTE_LIT ;

// Soft keywords: words with a meaning inside `pipeline` that may still
// name variables elsewhere.
ident
  : ID | RANKS | STAGES | MICROBATCHES | PLACEMENT | COST | COMM | MEMORY
  | LIMIT | FSDP | PREFETCH | STEP | STAGE_KW | DIRECTIONS
  ;

// ---------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------
IMPORT : 'import' ;
SCHEDULE : 'schedule' ;
FN : 'fn' ;
PIPELINE : 'pipeline' ;
LET : 'let' ;
FOR : 'for' ;
WHILE : 'while' ;
BREAK : 'break' ;
CONTINUE : 'continue' ;
IN : 'in' ;
IF : 'if' ;
ELSE : 'else' ;
RANK : 'rank' ;
RETURN : 'return' ;
ASSERT : 'assert' ;
TRUE : 'true' ;
FALSE : 'false' ;
OVERLAP : 'overlap' ;
SEND : 'send' ;
RECV : 'recv' ;
UNSHARD : 'unshard' ;
RESHARD : 'reshard' ;
REDUCE_GRAD : 'reduce_grad' ;
IDLE : 'idle' ;

// soft keywords
RANKS : 'ranks' ;
STAGES : 'stages' ;
STAGE_KW : 'stage' ;
MICROBATCHES : 'microbatches' ;
PLACEMENT : 'placement' ;
DIRECTIONS : 'directions' ;
COST : 'cost' ;
COMM : 'comm' ;
MEMORY : 'memory' ;
LIMIT : 'limit' ;
FSDP : 'fsdp' ;
PREFETCH : 'prefetch' ;
STEP : 'step' ;

// F3 (forward of microbatch 3) must win over ID for the same text. The
// common `F3@5` is one token: lowered files are mostly these, and one token
// instead of three keeps big schedules cheap to parse. `F3@(s+1)` and
// `F3@s` still go through AT primary.
COMPUTE_LIT : [FIWB] [0-9]+ ('@' [0-9]+)? ;
COMPUTE_KIND : [FIWB] ;

ID : [a-zA-Z_] [a-zA-Z0-9_]* ;
FLOAT : [0-9]+ '.' [0-9]+ ([eE] [+-]? [0-9]+)? | [0-9]+ [eE] [+-]? [0-9]+ ;
INT : [0-9]+ ;
STRING : '"' (~["\\\r\n] | '\\' .)* '"' ;

ARROW : '->' ;
LARROW : '<-' ;
DOTDOT : '..' ;
DOT : '.' ;
AT : '@' ;
SEMI : ';' ;
COLON : ':' ;
COMMA : ',' ;
LPAREN : '(' ;
RPAREN : ')' ;
LBRACE : '{' ;
RBRACE : '}' ;
LBRACK : '[' ;
RBRACK : ']' ;
EQEQ : '==' ;
NE : '!=' ;
LE : '<=' ;
GE : '>=' ;
LT : '<' ;
GT : '>' ;
ANDAND : '&&' ;
OROR : '||' ;
BANG : '!' ;
ASSIGN : '=' ;
PLUS : '+' ;
MINUS : '-' ;
STAR : '*' ;
SLASH : '/' ;
PERCENT : '%' ;

LINE_COMMENT : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
WS : [ \t\r\n\f]+ -> skip ;
// Anything else becomes a hidden token that the front end reports as an
// invalid character (the parser never sees it), so the lexer never fails.
ERROR_CHAR : . -> channel(HIDDEN) ;
