// @ts-check
// The shapes of the REST API's answers that the console's modules pass around, as JSDoc types for the type
// check (tests/web/tsconfig.json). Types only: no module imports this file at run time; they name a type as
// import('./types.js').Job (pages: import('../types.js').Job). Written from web/openapi.json
// (components.schemas); a field the console may not get is optional, with the reason.
// An answer's type is the call's word, not checked at run time: api.get and the others return what the
// caller names (api.js).

// --- the protocol's words ---------------------------------------------------------------------------------
/** @typedef {'ADMIN' | 'USER'} Role */
/** @typedef {'VIEWER' | 'OPERATOR' | 'DEVELOPER' | 'ADMIN'} GroupRoleName */
/** @typedef {'read' | 'operate' | 'write' | 'admin'} TokenScope */
/** @typedef {'CRON' | 'FIX_RATE' | 'FIX_DELAY' | 'NONE'} ScheduleType */
/** @typedef {'CRON' | 'FIX_RATE' | 'NONE'} WorkflowScheduleType */
/** @typedef {'DO_NOTHING' | 'FIRE_ONCE_NOW'} MisfireStrategy */
/**
 * @typedef {'FIRST' | 'LAST' | 'ROUND' | 'RANDOM' | 'CONSISTENT_HASH' | 'LEAST_FREQUENTLY_USED'
 *   | 'LEAST_RECENTLY_USED' | 'FAILOVER' | 'BUSYOVER' | 'SHARDING_BROADCAST'} RouteStrategy
 */
/** @typedef {'SERIAL_EXECUTION' | 'DISCARD_LATER' | 'COVER_EARLY'} BlockStrategy */
/**
 * @typedef {'BEAN' | 'GLUE_GROOVY' | 'GLUE_SHELL' | 'GLUE_PYTHON' | 'GLUE_PYTHON2' | 'GLUE_PHP' | 'GLUE_NODEJS'
 *   | 'GLUE_POWERSHELL'} GlueType
 */
/** @typedef {'ALLOW' | 'FORBID'} ConcurrencyPolicy */
/** @typedef {'AUTO' | 'MANUAL'} AddressType */
/** @typedef {'PENDING' | 'RUNNING' | 'SUCCESS' | 'FAILED' | 'SKIPPED'} LogStatus */
/** @typedef {'SUCCESS' | 'FAILURE' | 'ALWAYS'} EdgeCondition */
/** @typedef {'RUNNING' | 'SUCCESS' | 'FAILED' | 'KILLED' | 'SKIPPED'} WorkflowRunState */
/** @typedef {'WAITING' | 'RUNNING' | 'SUCCESS' | 'FAILED' | 'SKIPPED' | 'KILLED'} WorkflowNodeState */

// --- lists and errors ---------------------------------------------------------------------------------------
/**
 * A list answer: GET /jobs, /logs, /audit and /workflows (and a workflow's runs) also count everything that
 * matched (total), the others send items only.
 * @template T
 * @typedef {{ items: T[], total?: number }} List
 */
/**
 * @template T
 * @typedef {{ items: T[], total: number }} Page
 */

/**
 * A field error's params (docs/architecture.md, "Errors": which code sends which); `format` may add the value
 * it refused (`tag`).
 * @typedef {{
 *   expected?: string, min?: number, max?: number, actual?: number, allowed?: string | string[],
 *   value?: string, id?: number | string, what?: string, role?: string, limit?: string, fields?: string,
 *   cycle?: string, [name: string]: unknown,
 * }} FieldErrorParams
 */
/**
 * One field in error: its name ('' for the whole body; "nodes[2].key" inside lists), the server's English
 * message, and the code and params the console translates (docs/architecture.md, "Errors").
 * @typedef {Object} FieldError
 * @property {string} field
 * @property {string} message
 * @property {string} [code]
 * @property {FieldErrorParams} [params]
 */
/**
 * The body of a failed call.
 * @typedef {Object} ErrorBody
 * @property {string} error
 * @property {string} [code]
 * @property {FieldError[]} [errors]
 */
/** @typedef {{ deleted: number }} Deleted */

// --- users, sessions, tokens ----------------------------------------------------------------------------
/** @typedef {{ group_id: number, role: GroupRoleName }} GroupRole */
/**
 * @typedef {Object} User
 * @property {number} id
 * @property {string} username
 * @property {Role} role
 * @property {number[]} [permitted_group_ids]
 * @property {GroupRole[]} [group_roles] absent from an older admin (each permitted group is DEVELOPER then)
 * @property {number} [created_ms]
 * @property {number} [updated_ms]
 * @property {string} [login_source] 'local', 'ldap' or 'oidc:<provider>'; absent from an older admin (local)
 * @property {string | null} [external_subject]
 */
/**
 * GET /auth/me.
 * @typedef {Object} Me
 * @property {User} user
 * @property {'session' | 'token'} [via]
 * @property {TokenScope} [scope]
 * @property {string} [csrf_token] sessions only
 */
/**
 * POST /auth/login.
 * @typedef {{ csrf_token: string, user: User }} LoginResponse
 */
/** @typedef {{ name: string, title: string, start: string }} OidcProvider */
/**
 * GET /auth/providers (public): the OpenID providers offered, whether LDAP logins are, and the sign-in policy.
 * @typedef {{ oidc: OidcProvider[], ldap?: boolean, require_sso?: boolean }} Providers
 */
/**
 * GET /auth/policy.
 * @typedef {{ require_sso: boolean, sso_configured: boolean, updated_by: string, updated_ms: number }} AuthPolicy
 */
/**
 * @typedef {Object} Token
 * @property {number} id
 * @property {number} user_id
 * @property {string} username
 * @property {string} name
 * @property {TokenScope} scope
 * @property {number} created_ms
 * @property {number} last_used_ms 0: never
 * @property {number} expires_ms
 * @property {number} revoked_ms 0: not revoked
 * @property {'' | 'password_reset' | 'password_changed' | 'identity_changed'} revoked_reason
 * @property {'active' | 'expired' | 'revoked'} state
 */
/** @typedef {Token & { token: string }} TokenCreated */

/**
 * @typedef {Object} AuditEntry
 * @property {number} id
 * @property {number} at_ms
 * @property {number | null} user_id
 * @property {string} username
 * @property {string} action
 * @property {string} entity
 * @property {string} entity_id
 * @property {Object<string, unknown> | null} before
 * @property {Object<string, unknown> | null} after
 * @property {string} via
 */

/**
 * GET /dashboard.
 * @typedef {Object} Dashboard
 * @property {{ jobs: number, enabled_jobs: number, fires_today: number, executors_online: number }} totals
 * @property {DashboardDay[]} days
 */
/** @typedef {{ day: string, running: number, success: number, failed: number }} DashboardDay */

// --- schedules ----------------------------------------------------------------------------------------------
/**
 * POST /schedules/preview's body.
 * @typedef {Object} PreviewRequest
 * @property {ScheduleType} schedule_type
 * @property {string} [schedule_conf]
 * @property {string} [time_zone]
 * @property {number} [count]
 * @property {number} [from_ms]
 * @property {number[]} [calendar_ids]
 * @property {number} [start_ms]
 * @property {number} [end_ms]
 */
/** @typedef {{ ms: number, iso: string }} PreviewFire */
/** @typedef {PreviewFire & { date: string, calendar: string, name: string }} PreviewExcluded */
/**
 * @typedef {Object} Preview
 * @property {string} time_zone
 * @property {PreviewFire[]} fires
 * @property {PreviewExcluded[]} [excluded]
 */

// --- groups and jobs ----------------------------------------------------------------------------------------
/**
 * An executor group.
 * @typedef {Object} Group
 * @property {number} id
 * @property {string} app_name
 * @property {string} title
 * @property {AddressType} address_type
 * @property {string[]} addresses
 * @property {string[]} [online_addresses] the answers of GET only, not of POST and PUT
 * @property {boolean} has_access_token
 * @property {string | null} [access_token] GET /groups/{id} for admins only
 * @property {number[]} [alert_channel_ids]
 * @property {number} created_ms
 * @property {number} updated_ms
 * @property {boolean} [allow_scripts]
 */
/**
 * @typedef {Object} Job
 * @property {number} id
 * @property {number} group_id
 * @property {string} description
 * @property {string} author
 * @property {string} alarm_email
 * @property {string} alarm_webhook
 * @property {ScheduleType} schedule_type
 * @property {string} schedule_conf
 * @property {string} time_zone
 * @property {MisfireStrategy} misfire_strategy
 * @property {RouteStrategy} route_strategy
 * @property {string} handler
 * @property {string} param
 * @property {BlockStrategy} block_strategy
 * @property {number} timeout_s
 * @property {number} retry_count
 * @property {number} retry_backoff_s
 * @property {GlueType} glue_type
 * @property {string} glue_source
 * @property {string} glue_remark
 * @property {number[]} child_job_ids
 * @property {string[]} tags
 * @property {number[]} alert_channel_ids
 * @property {boolean} enabled
 * @property {number} glue_updated_ms
 * @property {number} next_fire_ms
 * @property {number} last_fire_ms
 * @property {string} stop_reason
 * @property {number} created_ms
 * @property {number} updated_ms
 * @property {number[]} calendar_ids
 * @property {number} start_ms 0: no start
 * @property {number} end_ms 0: no end
 * @property {ConcurrencyPolicy} concurrency_policy
 * @property {number} max_concurrent 0: no limit
 */
/** @typedef {{ tag: string, jobs: number }} Tag */
/**
 * POST /jobs/bulk: one job's outcome.
 * @typedef {Object} BulkJobResult
 * @property {number} job_id
 * @property {number} status the HTTP status the job's own call would have had
 * @property {Job} [job]
 * @property {number} [log_id]
 * @property {number} [deleted]
 * @property {string} [error]
 * @property {string} [code]
 * @property {FieldError[]} [errors]
 */
/** @typedef {{ action: string, succeeded: number, failed: number, results: BulkJobResult[] }} BulkResult */
/**
 * A run once request of a job.
 * @typedef {Object} RunOnce
 * @property {number} id
 * @property {number} job_id
 * @property {number} fire_at_ms
 * @property {string | null} param null: the job's own
 * @property {'WAITING' | 'FIRED' | 'CANCELLED'} state
 * @property {number | null} log_id
 * @property {number} cancelled_ms
 * @property {string} cancelled_by
 * @property {string} created_by
 * @property {number} created_ms
 */
/**
 * A saved version of a script job's source.
 * @typedef {Object} GlueVersion
 * @property {number} id
 * @property {GlueType} glue_type
 * @property {string} glue_source
 * @property {string} glue_remark
 * @property {number} glue_updated_ms
 * @property {number} created_ms
 */

// --- fires --------------------------------------------------------------------------------------------------
/**
 * A fire (a row of the fire log, GET /logs and /logs/{id}).
 * @typedef {Object} Log
 * @property {number} id
 * @property {number} job_id
 * @property {number} group_id
 * @property {string} trigger_type
 * @property {number} scheduled_ms
 * @property {LogStatus} status
 * @property {string} executor_address
 * @property {string} executor_handler
 * @property {string} executor_param
 * @property {number} shard_index
 * @property {number} shard_total
 * @property {number} retry_count
 * @property {number | null} parent_log_id
 * @property {number} trigger_ms
 * @property {number} trigger_code
 * @property {string} trigger_msg
 * @property {number} start_ms
 * @property {number} handle_ms
 * @property {number} handle_code
 * @property {string} handle_msg
 * @property {number} alarm_status
 * @property {string} owner_node
 * @property {unknown} [output] the JSON value the handler returned for the child jobs
 */
/**
 * What the admin's archive holds of an ended fire's output: nothing (none), a copy still being fetched
 * (pending), or a copy taken, or given up on (archived, failed: the sizes of what it holds and left out).
 * @typedef {{ state: 'none' }
 *   | { state: 'pending', via: 'push' | 'pull', attempts: number, error?: string }
 *   | {
 *     state: 'archived' | 'failed', via: 'push' | 'pull', archived_ms: number, log_bytes: number,
 *     left_out_bytes: number, error?: string,
 *   }} LogArchive
 */
/**
 * GET /logs/{id}/output: a page of a fire's output.
 * @typedef {Object} LogOutput
 * @property {number} from_line
 * @property {number} to_line 0 if none
 * @property {string} content
 * @property {boolean} end
 * @property {'executor' | 'archive' | 'none'} [source]
 * @property {LogArchive} [archive] once the fire has ended
 */

// --- alerts and calendars ---------------------------------------------------------------------------------
/** @typedef {'EMAIL' | 'WEBHOOK'} AlertKind */
/** @typedef {'SLACK' | 'DINGTALK' | 'WECOM' | 'FEISHU' | 'JSON' | 'CUSTOM'} AlertPreset */
/** @typedef {'FAILED' | 'TIMEOUT' | 'LOST' | 'MISFIRE' | 'RECOVERED'} AlertEvent */
/**
 * @typedef {Object} AlertChannel
 * @property {number} id
 * @property {string} name
 * @property {AlertKind} kind
 * @property {AlertPreset | null} preset null for e-mail
 * @property {string} [target] ADMINs only
 * @property {string} [body_template] ADMINs only
 * @property {boolean} has_secret
 * @property {number} created_ms
 * @property {number} updated_ms
 * @property {AlertEvent[]} events
 * @property {number} threshold
 * @property {number} silence_s
 */
/** @typedef {{ ok: boolean, message: string }} AlertChannelTestResult */
/**
 * An alert sent (or not) for a failed fire.
 * @typedef {Object} AlertEntry
 * @property {number} id
 * @property {number} job_id
 * @property {number} channel_id
 * @property {string} channel_name
 * @property {number} log_id
 * @property {AlertEvent} event
 * @property {'SENT' | 'FAILED' | 'SENDING' | 'RETRYING' | 'SUPPRESSED' | 'BELOW_THRESHOLD'} outcome
 * @property {number} attempts
 * @property {number} next_attempt_ms
 * @property {string} message
 * @property {number} created_ms
 * @property {number} updated_ms
 */
/** @typedef {'EXCLUDE_DATES' | 'BUSINESS_DAYS'} CalendarKind */
/** @typedef {{ date: string, name: string }} CalendarDay */
/**
 * @typedef {Object} Calendar
 * @property {number} id
 * @property {string} name
 * @property {string} description
 * @property {CalendarKind} kind
 * @property {string} time_zone
 * @property {CalendarDay[]} days
 * @property {number} jobs how many jobs keep it
 * @property {number} created_ms
 * @property {number} updated_ms
 */

// --- workflows ----------------------------------------------------------------------------------------------
/**
 * @typedef {Object} WorkflowNode
 * @property {string} key
 * @property {number} job_id
 * @property {string | null} [param] null: the job's own
 */
/**
 * @typedef {Object} WorkflowEdge
 * @property {string} from
 * @property {string} to
 * @property {EdgeCondition} condition
 */
/**
 * @typedef {Object} Workflow
 * @property {number} id
 * @property {number} group_id
 * @property {string} name
 * @property {WorkflowNode[]} nodes
 * @property {WorkflowEdge[]} edges
 * @property {string} param
 * @property {WorkflowScheduleType} schedule_type
 * @property {string} schedule_conf
 * @property {string} time_zone
 * @property {MisfireStrategy} misfire_strategy
 * @property {boolean} enabled
 * @property {number | null} next_fire_ms
 * @property {number} last_fire_ms
 * @property {string} stop_reason
 * @property {string | null} run_as
 * @property {number} created_ms
 * @property {number} updated_ms
 */
/**
 * A node of a workflow's run.
 * @typedef {Object} WorkflowRunNode
 * @property {string} key
 * @property {number} job_id
 * @property {WorkflowNodeState} state
 * @property {number[]} log_ids its fires, oldest first
 * @property {number} start_ms
 * @property {number} end_ms
 */
/**
 * @typedef {Object} WorkflowRun
 * @property {number} id
 * @property {number} workflow_id
 * @property {number} group_id
 * @property {'CRON' | 'MISFIRE' | 'MANUAL' | 'API'} trigger_type
 * @property {number} scheduled_ms
 * @property {string} param
 * @property {WorkflowRunState} state
 * @property {number} start_ms
 * @property {number} end_ms 0 while it runs
 * @property {string} note
 * @property {string} created_by
 * @property {WorkflowRunNode[]} nodes
 * @property {WorkflowEdge[]} edges
 */

export {};
