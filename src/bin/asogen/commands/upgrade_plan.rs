//! `asogen upgrade-plan`: the steps of an upgrade for the user's apply path
//! and topology ([`asogen::features::plan`]), printed for people or as JSON,
//! or, with `--manifest N`, the objects step N applies.

use std::io::Write;

use super::{Problems, Status, ValuesError, error_line};
use crate::cli::{ReportFormat, UpgradePlanArgs};
use asogen::check::Checker;
use asogen::exit::{EXIT_FAILED, EXIT_USAGE};
use asogen::features::plan::{self, Invocation};
use asogen::model::{Model, Release};
use asogen::output::Stdout;
use asogen::read::ValuesInput;
use asogen::render::objects::{ASOGEN, Install};

/// Why `upgrade-plan` printed no plan.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The values cannot be read (exit 2) or do not parse (exit 1).
    #[error(transparent)]
    Values(#[from] ValuesError),
    /// The values are refused: there is nothing to upgrade to.
    #[error("the values are invalid: {} problem(s); there is nothing to upgrade to", .0.diagnostics.len())]
    Invalid(Problems),
    /// No plan leads there safely (the bridge).
    #[error(transparent)]
    Refused(#[from] plan::Refused),
    /// Values from standard input, which the printed commands would read
    /// again (empty the second time).
    #[error(
        "upgrade-plan prints commands that read your values files again, and standard input (-f -) is read once: the steps would run on the chart defaults\nhelp: save the values to a file and give its name (-f values.yaml)"
    )]
    StdinValues,
    /// `--manifest` names no step of the plan.
    #[error(
        "the plan via {via} has steps 1 to {steps}; there is no step {asked}\nhelp: run `asogen upgrade-plan --via {via}` without --manifest to see the steps"
    )]
    NoSuchStep {
        /// The path.
        via: &'static str,
        /// How many steps it has.
        steps: usize,
        /// The step asked for.
        asked: usize,
    },
}

impl super::Failure for Error {
    /// 1 for values that do not parse or are refused, else 2.
    fn exit_code(&self) -> u8 {
        match self {
            Error::Values(err) => err.exit_code(),
            Error::Invalid(_) | Error::Refused(_) => EXIT_FAILED,
            Error::NoSuchStep { .. } | Error::StdinValues => EXIT_USAGE,
        }
    }

    /// What to print: the problems, or the message.
    fn report(&self) -> String {
        match self {
            Error::Values(err) => err.report(),
            Error::Invalid(problems) => error_line(self) + &problems.human(),
            other => error_line(other),
        }
    }
}

/// The install the values render, with `extra` values set on top.
fn render(
    values: &ValuesInput,
    extra: &[plan::Setting],
    namespace: &str,
) -> Result<(Model, Vec<serde_json::Value>), Error> {
    let mut values = values.clone();
    // --set-string: the step's values are text (a tag) or a boolean, which
    // --set types
    for setting in extra {
        if setting.value == "true" || setting.value == "false" {
            values
                .set
                .push(format!("{}={}", setting.key.path(), setting.value));
        } else {
            values.set_string.push(asogen::read::set_string_expression(
                setting.key.path(),
                &setting.value,
            ));
        }
    }
    let sources = super::read_values(&values)?;
    let checker = Checker::for_sources(Release::default(), &sources);
    let model = checker.check(&sources, namespace).map_err(|diagnostics| {
        Error::Invalid(Problems {
            diagnostics,
            sources: sources.clone(),
        })
    })?;
    let objects = Install::new(&model, ASOGEN).objects();
    Ok((model, objects))
}

/// Prints the plan, or the objects of one step.
pub fn run<W: Write>(args: &UpgradePlanArgs, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    // One step's objects (--manifest) read standard input once, as asked;
    // a printed plan would repeat `-f -` in its commands.
    if args.manifest.is_none() && args.values.values.iter().any(|f| f.as_os_str() == "-") {
        return Err(Error::StdinValues);
    }
    let values: ValuesInput = args.values.clone().into();
    let (model, objects) = render(&values, &[], &args.namespace)?;
    let invocation = Invocation {
        namespace: args.namespace.clone(),
        profiles: args.values.profiles.clone(),
        files: args
            .values
            .values
            .iter()
            .map(|f| f.display().to_string())
            .collect(),
        sets: values.sets_only() != ValuesInput::default(),
    };
    let path = args.via;
    let to = model.values.topology;
    let from = args.from.unwrap_or(to);
    let plan = if from == to {
        plan::plan(&model.shape, path, &objects, &invocation)?
    } else {
        // what the last step leaves: the same values in the shape it
        // starts from
        let (_, before) = render(
            &values,
            &[plan::Setting {
                key: asogen::keys::TOPOLOGY,
                value: plan::left_from(from, path).as_str().to_string(),
            }],
            &args.namespace,
        )?;
        let leftovers = plan::leftovers(&before, &objects);
        plan::migration(from, to, path, &objects, leftovers, &invocation)?
    };
    if let Some(n) = args.manifest {
        let step = plan
            .steps
            .iter()
            .find(|s| s.number == n)
            .ok_or(Error::NoSuchStep {
                via: path.name(),
                steps: plan.steps.len(),
                asked: n,
            })?;
        let (step_model, rendered) = render(&values, &step.set, &args.namespace)?;
        let mut out = String::new();
        // kubectl's first step creates the namespace, as `template
        // --create-namespace` does, so that the plan also does a first
        // install; the appliers that prune (Flux, Argo CD) must not own it.
        if path == plan::Via::Kubectl && n == 1 {
            out.push_str("---\n");
            out.push_str(&chart_template::emit::to_yaml(
                &Install::new(&step_model, ASOGEN).namespace(),
            ));
        }
        for object in plan::step_objects(step, rendered) {
            out.push_str("---\n");
            out.push_str(&chart_template::emit::to_yaml(&object));
        }
        stdout.print(out);
        return Ok(Status::Success);
    }
    match args.format {
        ReportFormat::Human => stdout.print(plan::format_human(&plan)),
        ReportFormat::Json => {
            stdout.println(serde_json::to_string_pretty(&plan).expect("plans serialize"))
        }
    }
    Ok(Status::Success)
}
