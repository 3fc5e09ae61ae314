package codegraph

// The queries name what they capture:
//   @def.<kind> a definition node, with @name its name (and @recv, Go's receiver type);
//   @call a called name, @member a name read through a qualifier, @qual that qualifier (Go also:
//   @qual.call the function whose result it is, of @qual.recv or of a literal of type @qual.lit;
//   @qual.type the type asserted or built);
//   @ref any other identifier; @package Go's package; @import.alias/@import.path a Go import, or
//   a name a Python or JavaScript file imports and the module it comes from;
//   @local.embed a Go embedded field (named by its type); @local.elem the element type of a Go slice
//   or map local, @local.sameelem the slice a range clause's value walks; @qual.elem s of s[i].name;
//   @local.name (or @local.field, a member of the enclosing class) a variable whose type is
//   @local.type (declared or constructed) or @local.guess (the result of calling that name,
//   of package @local.pkg, or of the receiver @local.recv: a literal or a call), or @local.same
//   (Go: the type of that variable, x := y). A Go local left of a call takes its result by position.
// A node captured twice (as @ref and as @call) keeps the union of what it was.

const goQuery = `
(package_clause (package_identifier) @package)
(import_spec name: (_)? @import.alias path: (_) @import.path)
(function_declaration name: (identifier) @name) @def.func
(method_declaration receiver: (parameter_list (parameter_declaration type: (_) @recv)) name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name) @def.type
(type_alias name: (type_identifier) @name) @def.type
(method_elem name: (field_identifier) @name) @def.method
(const_spec name: (identifier) @name) @def.const
(source_file (var_declaration (var_spec name: (identifier) @name) @def.var))
(parameter_declaration name: (identifier) @local.name type: (_) @local.type)
(var_spec name: (identifier) @local.name type: (_) @local.type)
(short_var_declaration left: (expression_list (identifier) @local.name))
(range_clause left: (expression_list (identifier) @local.name))
(variadic_parameter_declaration name: (identifier) @local.name)
(field_declaration name: (field_identifier) @local.field type: (_) @local.type)
(field_declaration . type: [(type_identifier) (qualified_type) (generic_type)] @local.embed)
(field_declaration name: (field_identifier) @local.field type: [(slice_type element: (_) @local.elem) (array_type element: (_) @local.elem) (map_type value: (_) @local.elem)])
(interface_type (type_elem . [(type_identifier) (qualified_type)] @local.embed .))
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (composite_literal type: (_) @local.type)))
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (unary_expression operand: (composite_literal type: (_) @local.type))))
(short_var_declaration left: (expression_list (identifier) @local.name) right: (expression_list . (call_expression function: (identifier) @local.guess) .))
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (identifier) @local.same))
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (call_expression function: (identifier) @_new arguments: (argument_list . (_) @local.type .)) .) (#eq? @_new "new"))
(short_var_declaration left: (expression_list (identifier) @local.name) right: (expression_list . (call_expression function: (selector_expression operand: (identifier) @local.pkg field: (field_identifier) @local.guess)) .))
(short_var_declaration left: (expression_list (identifier) @local.name) right: (expression_list . (call_expression function: (selector_expression operand: (selector_expression field: (field_identifier) @local.pkg) field: (field_identifier) @local.guess)) .))
(short_var_declaration left: (expression_list (identifier) @local.name) right: (expression_list . (call_expression function: (selector_expression operand: [(composite_literal) (parenthesized_expression) (call_expression function: [(identifier) (selector_expression operand: (identifier))])] @local.recv field: (field_identifier) @local.guess)) .))
(parameter_declaration name: (identifier) @local.name type: [(slice_type element: (_) @local.elem) (array_type element: (_) @local.elem) (map_type value: (_) @local.elem)])
(var_spec name: (identifier) @local.name type: [(slice_type element: (_) @local.elem) (array_type element: (_) @local.elem) (map_type value: (_) @local.elem)])
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (composite_literal type: [(slice_type element: (_) @local.elem) (map_type value: (_) @local.elem)])))
(range_clause left: (expression_list . (identifier) . (identifier) @local.name) right: (identifier) @local.sameelem)
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression operand: (index_expression operand: [(identifier) (selector_expression field: (field_identifier))] @qual.elem) field: (field_identifier) @call))
(call_expression function: (selector_expression operand: (_) @qual field: (field_identifier) @call))
(call_expression function: (selector_expression operand: (call_expression function: (identifier) @qual.call) field: (field_identifier) @call))
(call_expression function: (selector_expression operand: (call_expression function: (selector_expression operand: (identifier) @qual.recv field: (field_identifier) @qual.call)) field: (field_identifier) @call))
(call_expression function: (selector_expression operand: (call_expression function: (selector_expression operand: (selector_expression field: (field_identifier) @qual.recv) field: (field_identifier) @qual.call)) field: (field_identifier) @call))
(call_expression function: (selector_expression operand: (call_expression function: (selector_expression operand: [(composite_literal type: [(type_identifier) @qual.lit (qualified_type name: (type_identifier) @qual.lit)]) (parenthesized_expression [(composite_literal type: [(type_identifier) @qual.lit (qualified_type name: (type_identifier) @qual.lit)]) (unary_expression operand: (composite_literal type: [(type_identifier) @qual.lit (qualified_type name: (type_identifier) @qual.lit)]))])] field: (field_identifier) @qual.call)) field: (field_identifier) @call))
(call_expression function: (selector_expression operand: (type_assertion_expression type: [(type_identifier) @qual.type (pointer_type (type_identifier) @qual.type)]) field: (field_identifier) @call))
(call_expression function: (selector_expression operand: (parenthesized_expression (type_assertion_expression type: [(type_identifier) @qual.type (pointer_type (type_identifier) @qual.type)])) field: (field_identifier) @call))
(call_expression function: (selector_expression operand: (composite_literal type: [(type_identifier) @qual.type (qualified_type name: (type_identifier) @qual.type)]) field: (field_identifier) @call))
(call_expression function: (selector_expression operand: (parenthesized_expression [(composite_literal type: [(type_identifier) @qual.type (qualified_type name: (type_identifier) @qual.type)]) (unary_expression operand: (composite_literal type: [(type_identifier) @qual.type (qualified_type name: (type_identifier) @qual.type)]))]) field: (field_identifier) @call))
(selector_expression operand: (_) @qual field: (field_identifier) @member)
(qualified_type package: (package_identifier) @qual name: (type_identifier) @member)
(identifier) @ref
(type_identifier) @ref
`

const pythonQuery = `
(function_definition name: (identifier) @name) @def.func
(class_definition name: (identifier) @name) @def.class
(module (expression_statement (assignment left: (identifier) @name) @def.const))
(import_from_statement module_name: (_) @import.path name: (dotted_name . (identifier) @import.alias))
(typed_parameter (identifier) @local.name type: (type) @local.type)
(parameters (identifier) @local.name)
(default_parameter name: (identifier) @local.name)
(assignment left: (identifier) @local.name)
(for_statement left: (identifier) @local.name)
(assignment left: (identifier) @local.name right: (call function: (identifier) @local.guess))
(assignment left: (attribute object: (identifier) attribute: (identifier) @local.field) right: (call function: (identifier) @local.guess))
(call function: (identifier) @call)
(call function: (attribute object: (_) @qual attribute: (identifier) @call))
(attribute object: (_) @qual attribute: (identifier) @member)
(identifier) @ref
`

const jsCommon = `
(import_statement (import_clause (named_imports (import_specifier name: (identifier) @import.alias))) source: (string) @import.path)
(import_statement (import_clause (identifier) @import.alias) source: (string) @import.path)
(function_declaration name: (identifier) @name) @def.func
(generator_function_declaration name: (identifier) @name) @def.func
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.func
(program (lexical_declaration (variable_declarator name: (identifier) @name) @def.const))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name) @def.const)))
(variable_declarator name: (identifier) @local.name value: (new_expression constructor: (identifier) @local.type))
(variable_declarator name: (identifier) @local.name)
(variable_declarator name: (identifier) @local.name value: (call_expression function: (identifier) @local.guess))
(assignment_expression left: (member_expression object: (this) property: (property_identifier) @local.field) right: (new_expression constructor: (identifier) @local.type))
(call_expression function: (identifier) @call)
(call_expression function: (member_expression object: (_) @qual property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)
(member_expression object: (_) @qual property: (property_identifier) @member)
(identifier) @ref
`

const jsQuery = jsCommon + `
(field_definition property: (property_identifier) @local.field value: (new_expression constructor: (identifier) @local.type))
(formal_parameters (identifier) @local.name)
`

const tsQuery = jsCommon + `
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(function_signature name: (identifier) @name) @def.func
(required_parameter pattern: (identifier) @local.name type: (type_annotation (_) @local.type))
(required_parameter pattern: (identifier) @local.name)
(optional_parameter pattern: (identifier) @local.name type: (type_annotation (_) @local.type))
(variable_declarator name: (identifier) @local.name type: (type_annotation (_) @local.type))
(public_field_definition name: (property_identifier) @local.field type: (type_annotation (_) @local.type))
(public_field_definition name: (property_identifier) @local.field value: (new_expression constructor: (identifier) @local.type))
(type_identifier) @ref
`

const rustQuery = `
(function_item name: (identifier) @name) @def.func
(function_signature_item name: (identifier) @name) @def.func
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.struct
(trait_item name: (type_identifier) @name) @def.trait
(impl_item type: (_) @name) @def.impl
(type_item name: (type_identifier) @name) @def.type
(const_item name: (identifier) @name) @def.const
(static_item name: (identifier) @name) @def.const
(mod_item name: (identifier) @name body: (_)) @def.module
(macro_definition name: (identifier) @name) @def.macro
(parameter pattern: (identifier) @local.name type: (_) @local.type)
(let_declaration pattern: (identifier) @local.name type: (_) @local.type)
(let_declaration pattern: (identifier) @local.name)
(let_declaration pattern: (identifier) @local.name value: (call_expression function: (scoped_identifier path: (identifier) @local.guess)))
(let_declaration pattern: (identifier) @local.name value: (call_expression function: (identifier) @local.guess))
(call_expression function: (identifier) @call)
(call_expression function: (scoped_identifier path: (_) @qual name: (identifier) @call))
(call_expression function: (field_expression value: (_) @qual field: (field_identifier) @call))
(macro_invocation macro: (identifier) @call)
(field_expression value: (_) @qual field: (field_identifier) @member)
(scoped_identifier path: (_) @qual name: (identifier) @member)
(scoped_type_identifier path: (_) @qual name: (type_identifier) @member)
(identifier) @ref
(type_identifier) @ref
`

const javaQuery = `
(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.class
(annotation_type_declaration name: (identifier) @name) @def.interface
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.constructor
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @def.field
(formal_parameter type: (_) @local.type name: (identifier) @local.name)
(local_variable_declaration type: (_) @local.type declarator: (variable_declarator name: (identifier) @local.name))
(local_variable_declaration declarator: (variable_declarator name: (identifier) @local.name value: (object_creation_expression type: (_) @local.type)))
(field_declaration type: (_) @local.type declarator: (variable_declarator name: (identifier) @local.field))
(method_invocation object: (_) @qual name: (identifier) @call)
(method_invocation name: (identifier) @call)
(object_creation_expression type: (type_identifier) @call)
(field_access object: (_) @qual field: (identifier) @member)
(identifier) @ref
(type_identifier) @ref
`

// C and C++ share the definitions of functions (the name sits inside
// pointer declarators), records, enums, typedefs and macros.
const cCommon = `
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.func
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.func
(function_definition declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))) @def.func
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type
(preproc_def name: (identifier) @name) @def.const
(preproc_function_def name: (identifier) @name) @def.macro
(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @def.var)
(declaration declarator: (function_declarator declarator: (identifier) @skip))
(declaration declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @skip)))
(function_definition declarator: [(function_declarator parameters: (parameter_list (parameter_declaration declarator: (identifier) @local.name))) (pointer_declarator declarator: (function_declarator parameters: (parameter_list (parameter_declaration declarator: (identifier) @local.name))))])
(function_definition declarator: [(function_declarator parameters: (parameter_list (parameter_declaration declarator: (pointer_declarator declarator: (identifier) @local.name)))) (pointer_declarator declarator: (function_declarator parameters: (parameter_list (parameter_declaration declarator: (pointer_declarator declarator: (identifier) @local.name)))))])
(compound_statement (declaration declarator: (identifier) @local.name))
(init_declarator declarator: (identifier) @local.name)
(init_declarator declarator: (pointer_declarator declarator: (identifier) @local.name))
(call_expression function: (identifier) @call)
(call_expression function: (field_expression argument: (_) @qual field: (field_identifier) @call))
(field_expression argument: (_) @qual field: (field_identifier) @member)
(identifier) @ref
(type_identifier) @ref
`

const cQuery = cCommon

const cppQuery = cCommon + `
(function_definition declarator: (function_declarator declarator: (field_identifier) @name)) @def.func
(function_definition declarator: (function_declarator declarator: (qualified_identifier scope: (_) @recv name: (identifier) @name))) @def.method
(function_definition declarator: (reference_declarator (function_declarator declarator: (qualified_identifier scope: (_) @recv name: (identifier) @name)))) @def.method
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier scope: (_) @recv name: (identifier) @name)))) @def.method
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name)) @def.method
(class_specifier name: (type_identifier) @name body: (_)) @def.class
(namespace_definition name: (namespace_identifier) @name) @def.module
(alias_declaration name: (type_identifier) @name) @def.type
(concept_definition name: (identifier) @name) @def.type
(parameter_declaration type: [(type_identifier) (qualified_identifier) (template_type)] @local.type declarator: (identifier) @local.name)
(parameter_declaration type: [(type_identifier) (qualified_identifier) (template_type)] @local.type declarator: [(pointer_declarator declarator: (identifier) @local.name) (reference_declarator (identifier) @local.name)])
(declaration type: [(type_identifier) (qualified_identifier) (template_type)] @local.type declarator: (init_declarator declarator: (identifier) @local.name))
(declaration type: [(type_identifier) (qualified_identifier) (template_type)] @local.type declarator: (identifier) @local.name)
(field_declaration type: [(type_identifier) (qualified_identifier) (template_type)] @local.type declarator: (field_identifier) @local.field)
(field_declaration type: [(type_identifier) (qualified_identifier) (template_type)] @local.type declarator: (pointer_declarator declarator: (field_identifier) @local.field))
(call_expression function: (qualified_identifier scope: (_) @qual name: (identifier) @call))
(call_expression function: (template_function name: (identifier) @call))
(new_expression type: (type_identifier) @call)
(qualified_identifier scope: (_) @qual name: (_) @member)
(namespace_identifier) @ref
`

const csharpQuery = `
(class_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(delegate_declaration name: (identifier) @name) @def.type
(namespace_declaration name: (_) @name) @def.module
(file_scoped_namespace_declaration name: (_) @name) @def.module
(namespace_declaration name: (_) @skip)
(file_scoped_namespace_declaration name: (_) @skip)
(using_directive (_) @skip)
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.constructor
(property_declaration name: (identifier) @name) @def.property
(field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @def.field
(parameter type: (_) @local.type name: (identifier) @local.name)
(local_declaration_statement (variable_declaration type: (_) @local.type (variable_declarator name: (identifier) @local.name)))
(local_declaration_statement (variable_declaration (variable_declarator name: (identifier) @local.name (object_creation_expression type: (_) @local.type))))
(field_declaration (variable_declaration type: (_) @local.type (variable_declarator name: (identifier) @local.field)))
(property_declaration type: (_) @local.type name: (identifier) @local.field)
(invocation_expression function: (identifier) @call)
(invocation_expression function: (member_access_expression expression: (_) @qual name: (identifier) @call))
(invocation_expression function: (member_access_expression expression: (_) @qual name: (generic_name (identifier) @call)))
(object_creation_expression type: (identifier) @call)
(member_access_expression expression: (_) @qual name: (identifier) @member)
(identifier) @ref
`

const rubyQuery = `
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method
(class name: [(constant) @name (scope_resolution name: (_) @name)]) @def.class
(module name: [(constant) @name (scope_resolution name: (_) @name)]) @def.module
(assignment left: (constant) @name) @def.const
(method_parameters (identifier) @local.name)
(optional_parameter name: (identifier) @local.name)
(keyword_parameter name: (identifier) @local.name)
(block_parameters (identifier) @local.name)
(assignment left: (identifier) @local.name)
(assignment left: (identifier) @local.name right: (call receiver: [(constant) (scope_resolution)] @local.type method: (identifier) @_new (#eq? @_new "new")))
(assignment left: (instance_variable) @local.field right: (call receiver: [(constant) (scope_resolution)] @local.type method: (identifier) @_new (#eq? @_new "new")))
(call receiver: (_) @qual method: (identifier) @call)
(call method: (identifier) @call)
(call receiver: [(constant) @call (scope_resolution name: (constant) @call)] method: (identifier) @_new (#eq? @_new "new"))
(scope_resolution scope: (_) @qual name: (constant) @member)
(identifier) @ref
(constant) @ref
`

const phpQuery = `
(namespace_definition name: (namespace_name) @name) @def.module
(namespace_definition name: (_) @skip)
(namespace_use_clause (qualified_name (namespace_name) @skip))
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(function_definition name: (name) @name) @def.func
(method_declaration name: (name) @name) @def.method
(const_declaration (const_element (name) @name)) @def.const
(simple_parameter type: (named_type (name) @local.type) name: (variable_name (name) @local.name))
(simple_parameter name: (variable_name (name) @local.name))
(assignment_expression left: (variable_name (name) @local.name))
(assignment_expression left: (variable_name (name) @local.name) right: (object_creation_expression (name) @local.type))
(property_declaration type: (named_type (name) @local.type) (property_element name: (variable_name (name) @local.field)))
(property_promotion_parameter type: (named_type (name) @local.type) name: (variable_name (name) @local.field))
(function_call_expression function: (name) @call)
(function_call_expression function: (qualified_name (name) @call .))
(member_call_expression object: (_) @qual name: (name) @call)
(nullsafe_member_call_expression object: (_) @qual name: (name) @call)
(scoped_call_expression scope: (_) @qual name: (name) @call)
(object_creation_expression (name) @call)
(object_creation_expression (qualified_name (name) @call .))
(member_access_expression object: (_) @qual name: (name) @member)
(class_constant_access_expression (_) @qual (name) @member .)
(name) @ref
`

const kotlinQuery = `
(class_declaration name: (identifier) @name) @def.class
(package_header (_) @skip)
(import (qualified_identifier (identifier) @skip (identifier)))
(object_declaration name: (identifier) @name) @def.class
(companion_object name: (identifier) @name) @def.class
(function_declaration name: (identifier) @name) @def.func
(type_alias type: (identifier) @name) @def.type
(source_file (property_declaration (variable_declaration (identifier) @name)) @def.const)
(parameter (identifier) @local.name (user_type (identifier) @local.type))
(class_parameter (identifier) @local.field (user_type (identifier) @local.type))
(property_declaration (variable_declaration (identifier) @local.name (user_type (identifier) @local.type)))
(property_declaration (variable_declaration (identifier) @local.name))
(property_declaration (variable_declaration (identifier) @local.name) (call_expression . (identifier) @local.guess))
(class_body (property_declaration (variable_declaration (identifier) @local.field (user_type (identifier) @local.type))))
(class_body (property_declaration (variable_declaration (identifier) @local.field) (call_expression . (identifier) @local.type)))
(call_expression . (identifier) @call)
(call_expression . (navigation_expression (_) @qual . (identifier) @call .))
(navigation_expression (_) @qual . (identifier) @member .)
(identifier) @ref
`

const bashQuery = `
(function_definition name: (word) @name) @def.func
(program (variable_assignment name: (variable_name) @name) @def.var)
(command name: (command_name (word) @call))
((simple_expansion (variable_name) @ref) (#match? @ref "^[A-Za-z_]"))
((expansion (variable_name) @ref) (#match? @ref "^[A-Za-z_]"))
`
